import { expect } from 'chai';
import { InvalidArgumentError } from '@granary/core';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { descriptorOf } from '../../src/generator/emit-descriptor';
import { loadProtoFiles } from '../../src/model/from-proto-files';
import type { MessageCodec, Struct, Timestamp } from '../../src/runtime';
import {
  GRAIN_INVOKE_RESULT_TYPE,
  GRAIN_INVOKE_TYPE,
  PayloadDecodeError,
  TYPE_NAME_TAG,
  codecOf,
  defineProtoFile,
} from '../../src/runtime';
import { RecordingRegistry } from '../helpers/in-memory-cluster';
import { PROTOS_DIR } from '../helpers/paths';

// The descriptor the generator embeds for test/protos/common/types.proto.
const model = loadProtoFiles([join(PROTOS_DIR, 'common', 'types.proto')], {
  includeDirs: [PROTOS_DIR],
});
const registry = new RecordingRegistry();
const file = defineProtoFile(registry, 'common/types.proto', descriptorOf(model.files[0]));

interface Money {
  currency: number;
  amountMinor: string;
}
interface Address {
  street: string;
  city: string;
  postalCode?: string;
  geo?: { lat: number; lon: number };
}
interface AllScalars {
  fInt64: string;
  fUint64: string;
  fSint64: string;
  fFixed64: string;
  fSfixed64: string;
  fBytes: Uint8Array;
  manyInt64: string[];
  manyBytes: Uint8Array[];
  byInt: { [key: string]: string };
  byLong: { [key: string]: Money };
  byBool: { [key: string]: number };
  maybeInt64?: string;
  maybeCurrency?: number;
  [other: string]: unknown;
}
const AllScalars: MessageCodec<AllScalars> = file.codec('granary.test.common.AllScalars');
const Address: MessageCodec<Address> = file.codec('granary.test.common.Address');

/** Each message is refused by encode and by create with InvalidArgumentError naming `field`. */
function expectRefused(bad: ReadonlyArray<[object, string]>): void {
  for (const [message, field] of bad) {
    for (const call of [
      () => AllScalars.encode(message as never),
      () => AllScalars.create(message as never),
    ]) {
      expect(call, field).to.throw(InvalidArgumentError).with.property('argument', field);
    }
  }
}

describe('MessageCodec', () => {
  it('keeps 64-bit integers exact as decimal strings across the whole range', () => {
    const out = AllScalars.decode(
      AllScalars.encode({
        fInt64: '-9223372036854775808',
        fUint64: '18446744073709551615',
        fSint64: '-1',
        fFixed64: '9007199254740993',
        fSfixed64: '9223372036854775807',
      } as AllScalars),
    );
    expect(out).to.include({
      fInt64: '-9223372036854775808',
      fUint64: '18446744073709551615',
      fSint64: '-1',
      fFixed64: '9007199254740993',
      fSfixed64: '9223372036854775807',
    });
  });

  it('refuses a value of the wrong JavaScript type for its field, naming the field', () => {
    // protobufjs coerced each of these ('two' to 0, 5 to '5', 'yes' to true, a number to a
    // message with no fields...) or threw a bare TypeError.
    const P = 'granary.test.common.AllScalars';
    const bad: Array<[object, string]> = [
      [{ fInt32: 'two' }, `${P}.fInt32`],
      [{ fInt32: 1.5 }, `${P}.fInt32`],
      [{ fInt32: 2 ** 31 }, `${P}.fInt32`],
      [{ fUint32: -1 }, `${P}.fUint32`],
      [{ fFixed32: '7' }, `${P}.fFixed32`],
      [{ fDouble: '1.5' }, `${P}.fDouble`],
      [{ fBool: 'yes' }, `${P}.fBool`],
      [{ fString: 5 }, `${P}.fString`],
      [{ fBytes: 5 }, `${P}.fBytes`],
      [{ maybeCurrency: 'CURRENCY_GBP' }, `${P}.maybeCurrency`],
      [{ manyBytes: 'not-a-list' }, `${P}.manyBytes`],
      [{ byInt: [] }, `${P}.byInt`],
      [{ byInt: { '1': 7 } }, `${P}.byInt[1]`],
      // Map keys are strings; protobufjs wrote these as keys 0, 1, 1215752191, 1 and false.
      [{ byInt: { x: 'a' } }, `${P}.byInt key x`],
      [{ byInt: { '1.5': 'a' } }, `${P}.byInt key 1.5`],
      [{ byInt: { '99999999999': 'a' } }, `${P}.byInt key 99999999999`],
      [{ byInt: { '1': 'a', '01': 'b' } }, `${P}.byInt key 01`],
      [{ byBool: { yes: 1 } }, `${P}.byBool key yes`],
      [{ byBool: { true: 'CURRENCY_GBP' } }, `${P}.byBool[true]`],
      [{ byLong: { '7': 'money' } }, `${P}.byLong[7]`],
      [{ byLong: { '7': { currency: '1' } } }, `${P}.byLong[7].currency`],
    ];
    expectRefused(bad);
    for (const call of [() => Address.encode(5 as never), () => Address.encode(null as never)]) {
      expect(call)
        .to.throw(InvalidArgumentError)
        .with.property('argument', 'granary.test.common.Address');
    }
    // What the representation allows still encodes: enum names, bytes as Uint8Array or base64,
    // NaN and Infinity for floating point, null for an absent field.
    const ok = AllScalars.decode(
      AllScalars.encode({
        fInt32: -(2 ** 31),
        fUint32: 2 ** 32 - 1,
        fDouble: Number.NaN,
        fFloat: Infinity,
        fBytes: 'AQI=',
        manyBytes: [new Uint8Array([3])],
        maybeCurrency: 'CURRENCY_USD',
        byBool: { true: 1, false: 2 },
        byInt: { '-2147483648': 'min', '0': 'zero', '2147483647': 'max' },
        fString: null,
      } as never),
    );
    expect(ok).to.include({ fInt32: -(2 ** 31), fUint32: 2 ** 32 - 1, maybeCurrency: 2 });
    expect([...ok.fBytes]).to.deep.equal([1, 2]);
    expect(ok.byBool).to.deep.equal({ true: 1, false: 2 });
    expect(ok.byInt).to.deep.equal({ '-2147483648': 'min', '0': 'zero', '2147483647': 'max' });
  });

  it('refuses a 64-bit value that is not a decimal string in range, naming the field', () => {
    // protobufjs read each of these as another number (0, 1, a wrapped negative) and encoded it.
    const bad: Array<[object, string]> = [
      [{ fUint64: 'abc' }, 'granary.test.common.AllScalars.fUint64'],
      [{ fUint64: 'null' }, 'granary.test.common.AllScalars.fUint64'],
      [{ fInt64: '1e3' }, 'granary.test.common.AllScalars.fInt64'],
      [{ fFixed64: '-5' }, 'granary.test.common.AllScalars.fFixed64'],
      [{ fUint64: '18446744073709551616' }, 'granary.test.common.AllScalars.fUint64'],
      [{ fSfixed64: '9223372036854775808' }, 'granary.test.common.AllScalars.fSfixed64'],
      [{ fSint64: 1.5 }, 'granary.test.common.AllScalars.fSint64'],
      [{ fInt64: 2 ** 53 }, 'granary.test.common.AllScalars.fInt64'],
      [{ fInt64: 7n }, 'granary.test.common.AllScalars.fInt64'],
      [{ manyInt64: ['1', 'x'] }, 'granary.test.common.AllScalars.manyInt64[1]'],
      [{ byLong: { '-1': {} } }, 'granary.test.common.AllScalars.byLong key -1'],
      [
        { byLong: { '7': { amountMinor: '12.50' } } },
        'granary.test.common.AllScalars.byLong[7].amountMinor',
      ],
    ];
    expectRefused(bad);
    // What the representation allows still encodes: the range's ends, safe integers, Longs.
    const ok = AllScalars.decode(
      AllScalars.encode({
        fUint64: '18446744073709551615',
        fInt64: '-9223372036854775808',
        fSint64: -42, // a safe integer number is exact
        fFixed64: { low: 1567312775, high: 2874452, unsigned: true }, // a Long
      } as never),
    );
    expect(ok).to.include({
      fUint64: '18446744073709551615',
      fInt64: '-9223372036854775808',
      fSint64: '-42',
      fFixed64: '12345678901234567',
    });
  });

  it('fills proto3 scalars, repeated and maps with their defaults', () => {
    const out = AllScalars.decode(new Uint8Array());
    expect(out).to.include({ fDouble: 0, fInt64: '0', fBool: false, fString: '' });
    expect(out.manyInt64).to.deep.equal([]);
    expect(out.byInt).to.deep.equal({});
    expect(out.fBytes).to.be.instanceOf(Uint8Array).with.length(0);
  });

  it('round-trips bytes, repeated and maps (keys as strings)', () => {
    const input = {
      fBytes: new Uint8Array([1, 2, 255]),
      manyInt64: ['1', '-2'],
      manyBytes: [new Uint8Array([7])],
      byInt: { 1: 'one', [-5]: 'minus five' },
      byLong: { '18446744073709551615': { currency: 1, amountMinor: '250' } },
      byBool: { true: 2 },
    } as unknown as AllScalars;
    const out = AllScalars.decode(AllScalars.encode(input));
    expect([...out.fBytes]).to.deep.equal([1, 2, 255]);
    expect(out.manyInt64).to.deep.equal(['1', '-2']);
    expect([...out.manyBytes[0]]).to.deep.equal([7]);
    expect(out.byInt).to.deep.equal({ 1: 'one', '-5': 'minus five' });
    expect(out.byLong).to.deep.equal({
      '18446744073709551615': { currency: 1, amountMinor: '250' },
    });
    expect(out.byBool).to.deep.equal({ true: 2 });
  });

  it('leaves unset message fields absent (not null), and decodes set ones', () => {
    const empty = Address.decode(Address.encode({ street: 's', city: 'c' }));
    expect(empty).to.deep.equal({ street: 's', city: 'c' });
    expect('geo' in empty).to.equal(false);
    const full = Address.decode(
      Address.encode({ street: 's', city: 'c', geo: { lat: 1.5, lon: -2 } }),
    );
    expect(full.geo).to.deep.equal({ lat: 1.5, lon: -2 });
  });

  it('keeps proto3 optional presence: absent when unset, present when set to the default', () => {
    expect(Address.decode(Address.encode({ street: '', city: '' }))).to.not.have.property(
      'postalCode',
    );
    expect(
      Address.decode(Address.encode({ street: '', city: '', postalCode: '' })),
    ).to.have.property('postalCode', '');
    const scalars = AllScalars.decode(AllScalars.encode({ maybeInt64: '0' } as AllScalars));
    expect(scalars.maybeInt64).to.equal('0');
    expect(scalars).to.not.have.property('maybeCurrency');
  });

  it('keeps proto2 optional presence, and fills a proto2 [default] when the field is unset', () => {
    const legacy = loadProtoFiles([join(PROTOS_DIR, 'legacy', 'legacy.proto')], {
      includeDirs: [PROTOS_DIR],
    });
    const legacyFile = defineProtoFile(
      registry,
      'legacy/legacy.proto',
      descriptorOf(legacy.files[0]),
    );
    const Account: MessageCodec<Record<string, unknown>> = legacyFile.codec(
      'granary.test.legacy.Account',
    );
    // level has [default = 3]; balance and flags (messages) stay absent.
    expect(Account.decode(Account.encode({ id: 'a' }))).to.deep.equal({
      id: 'a',
      level: 3,
      scores: [],
      ledger: [],
    });
    // flags.frozen has no default (absent); flags.tier has [default = TIER_GOLD] (1).
    expect(Account.decode(Account.encode({ id: 'a', level: 0, flags: {} }))).to.deep.equal({
      id: 'a',
      level: 0,
      scores: [],
      ledger: [],
      flags: { tier: 1, perRegion: {} },
    });
  });

  it('refuses a proto2 required message or group left out, naming the field', () => {
    // protobufjs threw a bare TypeError ("Cannot read properties of null"); C++, Java and Go
    // refuse to encode a message missing a required field.
    const dir = mkdtempSync(join(tmpdir(), 'granary-required-'));
    writeFileSync(
      join(dir, 'req.proto'),
      'syntax = "proto2";\npackage req;\nmessage Inner { optional string k = 1; }\n' +
        'message R {\n  required int32 id = 1;\n  required Inner inner = 2;\n' +
        '  repeated Inner many = 3;\n  optional group G = 4 { required Inner deep = 5; }\n}\n',
    );
    const model = loadProtoFiles([join(dir, 'req.proto')], { includeDirs: [dir] });
    rmSync(dir, { recursive: true, force: true });
    const reqFile = defineProtoFile(registry, 'req.proto', descriptorOf(model.files[0]));
    const R: MessageCodec<Record<string, unknown>> = reqFile.codec('req.R');
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ id: 1 }, 'req.R.inner'],
      [{ id: 1, inner: null }, 'req.R.inner'],
      [{ id: 1, inner: {}, g: {} }, 'req.R.g.deep'],
      [{ inner: {}, many: [{}], g: { deep: undefined } }, 'req.R.g.deep'],
    ];
    for (const [message, field] of bad) {
      for (const call of [() => R.encode(message), () => R.create(message)]) {
        expect(call, field)
          .to.throw(InvalidArgumentError, 'must be set (a required Inner message)')
          .with.property('argument', field);
      }
    }
    // A required scalar left out is written as its default, as protobufjs always did.
    expect(R.decode(R.encode({ inner: {} }))).to.deep.equal({ id: 0, inner: {}, many: [] });
  });

  it('create() tags a message with its full type name, not enumerable', () => {
    const tagged = Address.create({ street: 'a', city: 'b' });
    expect((tagged as unknown as Record<symbol, unknown>)[TYPE_NAME_TAG]).to.equal(
      'granary.test.common.Address',
    );
    expect(Object.keys(tagged)).to.deep.equal(['street', 'city']);
    expect(Address.typeName).to.equal('granary.test.common.Address');
  });

  it('is() recognizes created and registry-decoded messages of its type only', () => {
    const type = registry.types.get('granary.test.common.Address')!;
    expect(Address.is(Address.create({ street: 'a', city: 'b' }))).to.equal(true);
    expect(Address.is(type.decode(Address.encode({ street: 'a', city: 'b' })))).to.equal(true);
    expect(Address.is({ street: 'a', city: 'b' })).to.equal(false);
    expect(AllScalars.is(Address.create({ street: 'a', city: 'b' }))).to.equal(false);
  });

  it('from() turns a protobufjs message (Longs, nulls) into the plain representation', () => {
    const type = registry.types.get('granary.test.common.AllScalars')!;
    const decoded = type.decode(
      AllScalars.encode({ fUint64: '18446744073709551615' } as AllScalars),
    );
    const plain = AllScalars.from(decoded);
    expect(plain.fUint64).to.equal('18446744073709551615');
    expect(plain.manyInt64).to.deep.equal([]);
    expect(AllScalars.from({ fInt64: '5' }).fInt64).to.equal('5');
    expect(() => AllScalars.from(42)).to.throw(PayloadDecodeError);
  });

  it('decoding bytes that are not the type throws PayloadDecodeError naming the type', () => {
    expect(() => Address.decode(new Uint8Array([0x0a, 0xff, 0xff, 0xff])))
      .to.throw(PayloadDecodeError)
      .with.property('message')
      .that.contains('granary.test.common.Address');
  });

  it('round-trips the well-known Timestamp and Struct', () => {
    const ts: MessageCodec<Timestamp> = codecOf('google.protobuf.Timestamp');
    expect(ts.decode(ts.encode({ seconds: '1700000000', nanos: 5 }))).to.deep.equal({
      seconds: '1700000000',
      nanos: 5,
    });
    const struct: MessageCodec<Struct> = codecOf('google.protobuf.Struct');
    const value = {
      fields: { a: { numberValue: 1 }, b: { listValue: { values: [{ boolValue: true }] } } },
    };
    expect(struct.decode(struct.encode(value))).to.deep.equal({
      fields: {
        a: { numberValue: 1, kind: 'numberValue' },
        b: { listValue: { values: [{ boolValue: true, kind: 'boolValue' }] }, kind: 'listValue' },
      },
    });
  });
});

describe('defineProtoFile', () => {
  it('registers every message type of the file, the envelope and the well-known types', () => {
    expect([...registry.types.keys()]).to.include.members([
      'granary.test.common.Money',
      'granary.test.common.Address',
      'granary.test.common.Address.Geo',
      'granary.test.common.AllScalars',
      GRAIN_INVOKE_TYPE,
      GRAIN_INVOKE_RESULT_TYPE,
      'google.protobuf.Timestamp',
      'google.protobuf.Struct',
    ]);
    expect(registry.types.has('granary.test.common.Currency')).to.equal(false);
  });

  it('defining the same file again returns the same definition and registers with a new registry', () => {
    const other = new RecordingRegistry();
    const again = defineProtoFile(other, 'common/types.proto', descriptorOf(model.files[0]));
    expect(again).to.equal(file);
    expect(other.types.has('granary.test.common.Money')).to.equal(true);
    expect(other.types.has(GRAIN_INVOKE_TYPE)).to.equal(true);
  });
});

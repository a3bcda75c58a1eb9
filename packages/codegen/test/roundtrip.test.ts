import { expect } from 'chai';
import { InvalidArgumentError } from '@granary/core';
import { WrongMessageTypeError } from '../src/runtime';
import { Everything } from './golden/wkt/all.granary';
import type { Everything as EverythingMessage } from './golden/wkt/all.granary';
import { Level, Node, Rich } from './golden/rich/rich.granary';
import type { Rich as RichMessage } from './golden/rich/rich.granary';
import {
  protocDecode,
  referenceEncode,
  referenceMessage,
  referenceRoot,
} from './helpers/reference';

const leaf = {
  weight: '18446744073709551615',
  data: new Uint8Array([0, 255, 7]),
  tag: 'label' as const,
  label: 'leaf',
};

/** Every field set, values at the edges of their ranges; what decode gives back, too. */
const RICH: RichMessage = {
  i64: '-9223372036854775808',
  u64: '18446744073709551615',
  s64: '-4611686018427387905',
  f64: '9007199254740993',
  sf64: '-1',
  blob: new Uint8Array([0, 1, 2, 254, 255]),
  counters: ['1', '-2', '9223372036854775807'],
  chunks: [new Uint8Array([1]), new Uint8Array([2, 3])],
  levels: [Level.LEVEL_LOW, Level.LEVEL_UNSPECIFIED, Level.LEVEL_HIGH],
  nodes: {
    a: { name: 'a', children: [{ name: 'a1', children: [], leaf }] },
    '': { name: '', children: [] },
  },
  byLong: { '-5': 'minus five', '9223372036854775807': 'max' },
  byUint: { '7': new Uint8Array([7]), '4294967295': new Uint8Array([1, 2]) },
  byBool: { true: Level.LEVEL_HIGH, false: Level.LEVEL_LOW },
  bySint: { '-1': leaf, '9223372036854775807': { weight: '0', data: new Uint8Array([9]) } },
  value: 'node',
  node: { name: 'chosen', children: [{ name: 'deep', children: [{ name: 'deeper', children: [] }] }] },
  maybe: '0',
  root: { name: 'root', children: [], leaf: { weight: '1', data: new Uint8Array(0), tag: 'level', level: Level.LEVEL_HIGH } },
  ttl: { seconds: '-3', nanos: -500 },
  meta: {
    fields: {
      s: { kind: 'stringValue', stringValue: 'v' },
      n: { kind: 'numberValue', numberValue: 1.5 },
      l: { kind: 'listValue', listValue: { values: [{ kind: 'boolValue', boolValue: true }] } },
      z: { kind: 'nullValue', nullValue: 0 },
    },
  },
  extra: { typeUrl: 'type.googleapis.com/granary.test.rich.Node', value: new Uint8Array([10, 1, 120]) },
  wrapped: { value: '18446744073709551615' },
  samples: [1.5, -0, Number.MAX_VALUE, -Infinity],
  name: 'rich ✓',
  flag: true,
  ratio: 0.5,
}; // prettier-ignore

describe('round trips against protobufjs and protoc', () => {
  const reference = referenceRoot('rich/rich.proto', 'wkt/all.proto');
  const RefRich = reference.lookupType('granary.test.rich.Rich');

  it('a rich message encodes to the bytes protobufjs writes, and decodes to itself', () => {
    const bytes = Buffer.from(Rich.encode(RICH));
    expect(bytes.equals(referenceEncode(RefRich, RICH))).to.equal(true);
    expect(Rich.decode(bytes)).to.deep.equal(RICH);
  });

  it('protoc --decode reads the generated encoding of a rich message', () => {
    const text = protocDecode('rich/rich.proto', 'granary.test.rich.Rich', Rich.encode(RICH));
    expect(text)
      .to.contain('i64: -9223372036854775808')
      .and.contain('u64: 18446744073709551615')
      .and.contain('s64: -4611686018427387905')
      .and.contain('f64: 9007199254740993')
      .and.contain('blob: "\\000\\001\\002\\376\\377"')
      .and.contain('key: 9223372036854775807\n  value: "max"')
      .and.contain('key: true\n  value: LEVEL_HIGH')
      .and.contain('name: "deeper"')
      .and.contain('seconds: -3')
      .and.contain('string_value: "v"')
      .and.contain('type_url: "type.googleapis.com/granary.test.rich.Node"')
      .and.contain('value: 18446744073709551615')
      .and.contain('maybe: 0');
    expect(text).to.not.contain('text:'); // the oneof holds `node`
  });

  it('leaving every field out encodes to nothing and decodes to the defaults', () => {
    expect(Rich.encode({})).to.have.length(0);
    expect(Rich.decode(new Uint8Array(0))).to.deep.equal(Rich.create());
    expect(Rich.create({ name: 'x' })).to.include({ name: 'x', i64: '0', flag: false });
  });

  it('every well-known type encodes as protobufjs does and protoc reads it', () => {
    const everything: EverythingMessage = {
      any: { typeUrl: 'x/y', value: new Uint8Array([1]) },
      duration: { seconds: '315576000000', nanos: 999999999 },
      empty: {},
      mask: { paths: ['a.b', 'c'] },
      struct: { fields: { k: { kind: 'boolValue', boolValue: false } } },
      value: { kind: 'numberValue', numberValue: -2 },
      list: { values: [{ kind: 'stringValue', stringValue: 's' }] },
      null: 0,
      timestamp: { seconds: '-62135596800', nanos: 1 },
      doubleValue: { value: 2.5 },
      floatValue: { value: 0.25 },
      int64Value: { value: '-9223372036854775808' },
      uint64Value: { value: '18446744073709551615' },
      int32Value: { value: -1 },
      uint32Value: { value: 4294967295 },
      boolValue: { value: true },
      stringValue: { value: 'w' },
      bytesValue: { value: new Uint8Array([5]) },
      history: [{ seconds: '1', nanos: 0 }],
      timeouts: { t: { seconds: '2', nanos: 3 } },
      choice: 'doc',
      doc: { fields: {} },
    };
    const RefEverything = reference.lookupType('granary.test.wkt.Everything');
    const bytes = Buffer.from(Everything.encode(everything));
    expect(bytes.equals(referenceEncode(RefEverything, everything))).to.equal(true);
    expect(Everything.decode(bytes)).to.deep.equal(everything);
    const text = protocDecode('wkt/all.proto', 'granary.test.wkt.Everything', bytes);
    expect(text)
      .to.contain('seconds: 315576000000')
      .and.contain('paths: "a.b"')
      .and.contain('value: -9223372036854775808')
      .and.contain('doc {');
  });

  describe('Codec.from() on a message of another protobufjs root', () => {
    it('gives the same object as decoding its bytes (oneof case and presence kept)', () => {
      const foreign = referenceMessage(RefRich, RICH);
      expect(Rich.from(foreign)).to.deep.equal(RICH);
      const onlyText = RefRich.fromObject({ text: 'just text' });
      const fromForeign = Rich.from(onlyText);
      expect(fromForeign.value).to.equal('text');
      expect(fromForeign).to.not.have.property('node');
      expect(fromForeign).to.not.have.property('maybe');
    });

    it('refuses a message of another type with WrongMessageTypeError', () => {
      const other = reference.lookupType('granary.test.rich.Node').fromObject({ name: 'n' });
      const err = (() => {
        try {
          return Rich.from(other);
        } catch (e) {
          return e;
        }
      })();
      expect(err).to.be.instanceOf(WrongMessageTypeError);
      expect(err).to.include({
        code: 'ERR_WRONG_MESSAGE_TYPE',
        expected: 'granary.test.rich.Rich',
        actual: 'granary.test.rich.Node',
      });
      expect(() => Rich.from(Node.create({ name: 'tagged' }))).to.throw(WrongMessageTypeError);
    });
  });

  it('refuses two members of one oneof set, at any depth, naming the oneof and both', () => {
    // protobufjs wrote both members and a reader kept the one of the higher number: spreading a
    // decoded message ({ ...decoded, text }) sent its old node member instead of the new text.
    const node = { name: 'n', children: [] };
    const leaf = { weight: '1', data: new Uint8Array(0), label: 'l', level: Level.LEVEL_HIGH };
    const bad: Array<[object, string, string]> = [
      [{ text: 'a', node }, 'granary.test.rich.Rich.value', 'got text and node'],
      [
        { big: '0', when: { seconds: '1', nanos: 0 } },
        'granary.test.rich.Rich.value',
        'big and when',
      ],
      [{ root: { ...node, leaf } }, 'granary.test.rich.Rich.root.leaf.tag', 'label and level'],
    ];
    for (const [message, oneof, members] of bad) {
      for (const call of [() => Rich.encode(message), () => Rich.create(message)]) {
        expect(call).to.throw(InvalidArgumentError, members).with.property('argument', oneof);
      }
    }
    // One member (with null or undefined beside it) still encodes, and a decoded one re-encodes.
    const one = Rich.decode(Rich.encode({ text: 'a', node: undefined, big: null } as never));
    expect(one).to.include({ value: 'text', text: 'a' });
    expect(Buffer.from(Rich.encode(one)).equals(Buffer.from(Rich.encode({ text: 'a' })))).to.equal(
      true,
    );
  });
});

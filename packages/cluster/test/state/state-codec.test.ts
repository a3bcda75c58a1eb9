import { expect } from 'chai';
import { InvalidArgumentError, serialization } from '@granary/core';
import * as protobuf from 'protobufjs';
import { jsonStateCodec } from '../../src/state/codecs/json-state-codec';
import { protobufStateCodec } from '../../src/state/codecs/protobuf-state-codec';
import { decodeState } from '../../src/state/codecs/state-codec';
import { StateDecodeError } from '../../src/state/errors';

const root = protobuf.parse(`
  syntax = "proto3";
  package shop;
  message Cart { string owner = 1; repeated string items = 2; int32 total = 3; }
  message CartV2 { int64 owner = 1; }
  message Line { string sku = 1; int32 qty = 2; }
  message Order { string owner = 1; repeated int32 codes = 4; repeated Line lines = 5; Status status = 6; }
  message OrderV1 { string owner = 1; }
  message OrderBadLine { repeated LineBad lines = 5; }
  message LineBad { int64 sku = 1; }
  enum Status { NEW = 0; PAID = 1; }
`).root;
const Cart = root.lookupType('shop.Cart');
const CartV2 = root.lookupType('shop.CartV2');
const registry = { lookup: (name: string) => root.lookupType(name) };

function decodeError(call: () => unknown): StateDecodeError {
  try {
    call();
  } catch (err) {
    expect(err).to.be.instanceOf(StateDecodeError);
    return err as StateDecodeError;
  }
  throw new Error('expected a StateDecodeError');
}

describe('state codecs', () => {
  describe('jsonStateCodec', () => {
    it('round-trips plain data', () => {
      const codec = jsonStateCodec<{ n: number; tags: string[]; x: null }>();
      const value = { n: 3, tags: ['a', 'ü'], x: null };
      expect(codec.decode(codec.encode(value))).to.deep.equal(value);
    });

    it('turns a value the validator refuses into a StateDecodeError naming kind, id and codec', () => {
      const codec = jsonStateCodec<{ count: number }>({
        validate: (v) => {
          if (typeof (v as { count?: unknown }).count !== 'number')
            throw new Error('count is not a number');
          return v as { count: number };
        },
      });
      const old = jsonStateCodec().encode({ count: 'seven' });
      const err = decodeError(() => decodeState(codec, 'counter', 'c1', old));
      expect(err.message)
        .to.contain('counter/c1')
        .and.to.contain('json')
        .and.to.contain('count is not a number');
      expect({ kind: err.kind, id: err.id, code: err.code }).to.deep.equal({
        kind: 'counter',
        id: 'c1',
        code: 'ERR_STATE_DECODE',
      });
      expect(err.cause).to.be.instanceOf(Error);
    });

    it('rejects bytes that are not UTF-8 JSON', () => {
      const codec = jsonStateCodec();
      decodeError(() => decodeState(codec, 'k', 'a', Uint8Array.of(0xff, 0xfe)));
      decodeError(() => decodeState(codec, 'k', 'a', new TextEncoder().encode('{"a":')));
    });
  });

  describe('protobufStateCodec', () => {
    it('round-trips a message given as a protobufjs Type', () => {
      const codec = protobufStateCodec<protobuf.Message>(Cart);
      const decoded = codec.decode(
        codec.encode(Cart.create({ owner: 'ann', items: ['x', 'y'], total: 7 })),
      );
      expect(Cart.toObject(decoded)).to.deep.equal({
        owner: 'ann',
        items: ['x', 'y'],
        total: 7,
      });
      expect(codec.name).to.equal('protobuf:shop.Cart');
    });

    it('looks a type name up in the registry', () => {
      const codec = protobufStateCodec<protobuf.Message>('shop.Cart', registry);
      expect(
        Cart.toObject(codec.decode(codec.encode(Cart.create({ owner: 'bo' })))).owner,
      ).to.equal('bo');
    });

    it('looks a type name up in the serialization registry of @granary/core by default', () => {
      const own = protobuf.parse(
        'syntax = "proto3"; package granary_state_test; message Tally { int32 n = 1; }',
      ).root;
      serialization.registerRoot(own);
      const Tally = own.lookupType('granary_state_test.Tally');
      const codec = protobufStateCodec<protobuf.Message>('granary_state_test.Tally');
      expect(Tally.toObject(codec.decode(codec.encode(Tally.create({ n: 4 }))))).to.deep.equal({
        n: 4,
      });
    });

    it('refuses a type name that is not registered, naming the type', () => {
      expect(() => protobufStateCodec('shop.Nope')).to.throw(
        InvalidArgumentError,
        /shop\.Nope is not registered/,
      );
      expect(() => protobufStateCodec('shop.Nope', { lookup: () => undefined })).to.throw(
        InvalidArgumentError,
        /shop\.Nope is not registered/,
      );
    });

    it('turns state written by an incompatible schema into a StateDecodeError', () => {
      const old = protobufStateCodec(Cart).encode(Cart.create({ owner: 'ann', items: ['x'] }));
      const err = decodeError(() => decodeState(protobufStateCodec(CartV2), 'cart', 'ann', old));
      expect(err.message).to.contain('cart/ann').and.to.contain('protobuf:shop.CartV2');
    });

    it('accepts compatible evolution: fields it does not know, packed repeated scalars, enums', () => {
      const Order = root.lookupType('shop.Order');
      const bytes = protobufStateCodec(Order).encode(
        Order.create({
          owner: 'ann',
          codes: [1, 2, 300],
          lines: [{ sku: 'a', qty: 2 }],
          status: 1,
        }),
      );
      const newer = protobufStateCodec<protobuf.Message>(Order);
      expect(Order.toObject(newer.decode(bytes))).to.deep.equal({
        owner: 'ann',
        codes: [1, 2, 300],
        lines: [{ sku: 'a', qty: 2 }],
        status: 1,
      });
      const OrderV1 = root.lookupType('shop.OrderV1');
      const older = protobufStateCodec<protobuf.Message>(OrderV1);
      expect(OrderV1.toObject(older.decode(bytes))).to.deep.equal({ owner: 'ann' });
    });

    it('checks nested messages too', () => {
      const Order = root.lookupType('shop.Order');
      const bytes = protobufStateCodec(Order).encode(Order.create({ lines: [{ sku: 'a' }] }));
      const err = decodeError(() =>
        decodeState(protobufStateCodec(root.lookupType('shop.OrderBadLine')), 'order', 'o1', bytes),
      );
      expect(err.message).to.contain('sku');
    });

    it('turns truncated bytes into a StateDecodeError', () => {
      const bytes = protobufStateCodec(Cart).encode(Cart.create({ owner: 'a long enough owner' }));
      decodeError(() => decodeState(protobufStateCodec(Cart), 'cart', 'x', bytes.subarray(0, 5)));
    });
  });
});

describe('state codecs keep the representation', () => {
  const rich = protobuf.parse(`
    syntax = "proto3";
    package keep;
    message Inner { bytes tag = 1; sint64 n = 2; }
    message Rich {
      int64 big = 1; uint64 ubig = 2; fixed64 f = 3; bytes blob = 4; repeated bytes blobs = 5;
      map<string, bytes> named = 6; Inner inner = 7; repeated Inner inners = 8;
      optional int64 maybe = 9; string s = 10; Kind kind = 11;
      oneof pick { int64 a = 12; string b = 13; }
    }
    enum Kind { ZERO = 0; ONE = 1; }
  `).root;
  const Rich = rich.lookupType('keep.Rich');

  it('protobufStateCodec over a Type: 64-bit as decimal strings, bytes as plain Uint8Array', () => {
    const codec = protobufStateCodec<Record<string, unknown>>(Rich);
    const state = {
      big: '9007199254740993',
      ubig: '18446744073709551615',
      f: '5',
      blob: new Uint8Array([1, 2, 255]),
      blobs: [new Uint8Array([7])],
      named: { k: new Uint8Array([9, 8]) },
      inner: { tag: new Uint8Array([3]), n: '-42' },
      inners: [{ tag: new Uint8Array(0), n: '0' }],
      s: 'x',
      kind: 1,
      a: '12',
    };
    const back = codec.decode(codec.encode(state));
    expect(typeof back.big).to.equal('string');
    expect(back.big).to.equal('9007199254740993');
    expect(back.ubig).to.equal('18446744073709551615');
    expect(back.blob).to.be.instanceOf(Uint8Array);
    expect((back.blob as Uint8Array).constructor).to.equal(Uint8Array);
    expect((back.blobs as Uint8Array[])[0]!.constructor).to.equal(Uint8Array);
    expect((back.named as Record<string, Uint8Array>).k!.constructor).to.equal(Uint8Array);
    const inner = back.inner as { tag: Uint8Array; n: string };
    expect(inner.tag.constructor).to.equal(Uint8Array);
    expect(inner.n).to.equal('-42');
    expect(back.pick).to.equal('a');
    expect(back.a).to.equal('12');
    expect(back).to.not.have.property('maybe'); // presence kept
    expect(JSON.stringify(back.blob)).to.equal(JSON.stringify(new Uint8Array([1, 2, 255])));
    expect(back.kind).to.equal(1);
  });

  it('fills implicit-presence zeros: an empty message decodes complete', () => {
    const codec = protobufStateCodec<Record<string, unknown>>(Rich);
    const back = codec.decode(codec.encode({}));
    expect(back.big).to.equal('0');
    expect(back.s).to.equal('');
    expect(back.kind).to.equal(0);
    expect((back.blob as Uint8Array).constructor).to.equal(Uint8Array);
    expect(back.blobs).to.deep.equal([]);
    expect(back).to.not.have.property('inner');
  });

  it('protobufStateCodec over a generated message codec uses its own encode and decode', () => {
    const generated = {
      typeName: 'keep.Inner',
      encode: (m: { n: string }) => Buffer.from(m.n),
      decode: (b: Uint8Array) => ({ n: Buffer.from(b).toString() }),
    };
    const codec = protobufStateCodec(generated);
    expect(codec.name).to.equal('protobuf:keep.Inner');
    expect(codec.decode(codec.encode({ n: '77' }))).to.deep.equal({ n: '77' });
  });

  it('jsonStateCodec round-trips Uint8Array (Buffer too) and bigint', () => {
    const codec = jsonStateCodec<{ b: Uint8Array; buf: Uint8Array; n: bigint; list: bigint[] }>();
    const back = codec.decode(
      codec.encode({
        b: new Uint8Array([0, 1, 255]),
        buf: Buffer.from('hi'),
        n: 2n ** 70n,
        list: [1n, -3n],
      }),
    );
    expect(back.b.constructor).to.equal(Uint8Array);
    expect([...back.b]).to.deep.equal([0, 1, 255]);
    expect(back.buf.constructor).to.equal(Uint8Array);
    expect(Buffer.from(back.buf).toString()).to.equal('hi');
    expect(back.n).to.equal(2n ** 70n);
    expect(back.list).to.deep.equal([1n, -3n]);
  });

  it('jsonStateCodec leaves objects with other keys alone', () => {
    const codec = jsonStateCodec<unknown>();
    const value = { $bytes: 1, other: { $bigint: 'x', y: 1 } };
    expect(codec.decode(codec.encode(value))).to.deep.equal(value);
  });
});

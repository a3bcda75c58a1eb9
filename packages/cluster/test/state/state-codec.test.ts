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

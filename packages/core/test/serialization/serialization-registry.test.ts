import { expect } from 'chai';
import * as protobuf from 'protobufjs';
import {
  DeadLetterError,
  RemoteError,
  SerializationError,
  UnknownTypeError,
} from '../../src/errors';
import {
  SerializationFormat,
  SerializationRegistry,
  serialization,
} from '../../src/serialization/serialization-registry';
import { TYPE_NAME, withTypeName } from '../../src/serialization/type-name';

const PING_PROTO = `
syntax = "proto3";
package test.ping;
message Ping { int32 n = 1; string text = 2; }
message Outer { message Inner { bytes data = 1; } Inner inner = 1; }
`;

function pingRoot(): protobuf.Root {
  return protobuf.parse(PING_PROTO).root;
}

describe('SerializationRegistry', () => {
  describe('registerRoot', () => {
    it('registers every message type of a root by full name, nested ones included', () => {
      const registry = new SerializationRegistry();
      registry.registerRoot(pingRoot());
      expect(registry.lookup('test.ping.Ping')).to.be.instanceOf(protobuf.Type);
      expect(registry.lookup('test.ping.Outer')).to.be.instanceOf(protobuf.Type);
      expect(registry.lookup('test.ping.Outer.Inner')).to.be.instanceOf(protobuf.Type);
      expect(registry.lookup('.test.ping.Ping')).to.equal(undefined);
    });
  });

  describe('registerType', () => {
    it("encodes a tagged plain object through the type's toEncodable, a message of it as it is", () => {
      const registry = new SerializationRegistry();
      const type = pingRoot().lookupType('test.ping.Ping');
      const seen: object[] = [];
      registry.registerType(type, (message) => {
        seen.push(message);
        const { text: _filled, ...rest } = message as { text?: string };
        return rest;
      });
      const plain = withTypeName('test.ping.Ping', { n: 3, text: 'filled in' });
      const sent = registry.serialize(plain);
      expect(seen).to.deep.equal([plain]);
      expect(type.toObject(type.decode(sent.bytes))).to.deep.equal({ n: 3 });
      const message = type.create({ n: 4, text: 'kept' });
      expect(type.toObject(type.decode(registry.serialize(message).bytes))).to.deep.equal({
        n: 4,
        text: 'kept',
      });
      expect(seen).to.have.length(1);
    });
  });

  describe('protobuf', () => {
    it('round-trips a registered message and keeps its type name', () => {
      const registry = new SerializationRegistry();
      const root = pingRoot();
      registry.registerRoot(root);
      const Ping = root.lookupType('test.ping.Ping');
      const out = registry.serialize(Ping.create({ n: 42, text: 'hi' }));
      expect(out.typeName).to.equal('test.ping.Ping');
      expect(out.format).to.equal(SerializationFormat.Protobuf);
      const back = registry.deserialize(out.typeName, out.bytes, out.format) as {
        n: number;
        text: string;
      };
      expect(back.n).to.equal(42);
      expect(back.text).to.equal('hi');
      expect(registry.typeNameOf(back)).to.equal('test.ping.Ping');
      expect((back as { [TYPE_NAME]?: string })[TYPE_NAME]).to.equal('test.ping.Ping');
    });

    it('encodes a plain object tagged with a registered name as that protobuf type', () => {
      const registry = new SerializationRegistry();
      registry.registerRoot(pingRoot());
      const out = registry.serialize(withTypeName('test.ping.Ping', { n: 7, text: 'x' }));
      expect(out.format).to.equal(SerializationFormat.Protobuf);
      const back = registry.deserialize(out.typeName, out.bytes) as { n: number };
      expect(back.n).to.equal(7);
    });

    it('knows granary.GrainInvoke out of the box and keeps its payload as bytes', () => {
      const payload = new Uint8Array([1, 2, 3, 250]);
      const out = serialization.serialize(
        withTypeName('granary.GrainInvoke', { method: 'a.B/C', payload }),
      );
      expect(out.format).to.equal(SerializationFormat.Protobuf);
      const back = serialization.deserialize(out.typeName, out.bytes) as {
        method: string;
        payload: Uint8Array;
      };
      expect(back.method).to.equal('a.B/C');
      expect([...back.payload]).to.deep.equal([1, 2, 3, 250]);
      expect(serialization.typeNameOf(back)).to.equal('granary.GrainInvoke');
    });

    it('returns bytes of its own: a later serialize does not change an earlier result', () => {
      const registry = new SerializationRegistry();
      const root = pingRoot();
      registry.registerRoot(root);
      const Ping = root.lookupType('test.ping.Ping');
      const first = registry.serialize(Ping.create({ n: 1, text: 'first' }));
      const copy = [...first.bytes];
      const second = registry.serialize(Ping.create({ n: 2, text: 'x'.repeat(200) }));
      expect([...first.bytes]).to.deep.equal(copy);
      expect(
        (registry.deserialize(second.typeName, second.bytes) as { text: string }).text,
      ).to.equal('x'.repeat(200));
    });

    it('throws UnknownTypeError for a type name that is not registered', () => {
      const sender = new SerializationRegistry();
      const root = pingRoot();
      sender.registerRoot(root);
      const out = sender.serialize(root.lookupType('test.ping.Ping').create({ n: 1 }));
      const receiver = new SerializationRegistry();
      let caught: unknown;
      try {
        receiver.deserialize(out.typeName, out.bytes, out.format);
      } catch (err) {
        caught = err;
      }
      expect(caught).to.be.instanceOf(UnknownTypeError);
      expect((caught as UnknownTypeError).code).to.equal('ERR_UNKNOWN_TYPE');
      expect((caught as UnknownTypeError).typeName).to.equal('test.ping.Ping');
      expect((caught as Error).message).to.contain('registerRoot');
    });
  });

  describe('deserializeFrom', () => {
    /** `before` junk bytes, the payload, then `after` junk bytes, as payloads sit in a frame. */
    function framed(payload: Uint8Array, before = 3, after = 4): Buffer {
      return Buffer.concat([Buffer.alloc(before, 0xff), payload, Buffer.alloc(after, 0x0a)]);
    }

    it('decodes a protobuf, JSON or bytes payload where it lies inside a bigger buffer', () => {
      const registry = new SerializationRegistry();
      const root = pingRoot();
      registry.registerRoot(root);
      const ping = registry.serialize(
        root.lookupType('test.ping.Ping').create({ n: 9, text: 'in' }),
      );
      const json = registry.serialize({ a: [1, 'b'] });
      const bytes = registry.serialize(new Uint8Array([5, 6]));
      for (const out of [ping, json, bytes]) {
        const buf = framed(out.bytes);
        const reader = protobuf.Reader.create(buf);
        const end = 3 + out.bytes.byteLength;
        const back = registry.deserializeFrom(out.typeName, reader, 3, end, out.format);
        expect(back).to.deep.equal(registry.deserialize(out.typeName, out.bytes, out.format));
        // The reader keeps its bounds for the next payload of the frame.
        expect(reader.len).to.equal(buf.length);
      }
    });

    it('throws for a protobuf payload that runs past its end, and for an unknown type name', () => {
      const registry = new SerializationRegistry();
      const root = pingRoot();
      registry.registerRoot(root);
      const out = registry.serialize(
        root.lookupType('test.ping.Ping').create({ n: 9, text: 'abc' }),
      );
      const buf = framed(out.bytes);
      const reader = protobuf.Reader.create(buf);
      // Cut two bytes short: the string field's length now points past the payload.
      expect(() =>
        registry.deserializeFrom(out.typeName, reader, 3, 3 + out.bytes.byteLength - 2),
      ).to.throw(RangeError);
      expect(reader.len).to.equal(buf.length);
      expect(() => registry.deserializeFrom('test.ping.Nope', reader, 3, 5)).to.throw(
        UnknownTypeError,
      );
    });
  });

  describe('json', () => {
    it('round-trips plain data: objects, arrays, strings, numbers, booleans, null', () => {
      const registry = new SerializationRegistry();
      for (const value of [{ a: 1, b: [true, null, 'x'] }, [1, 2], 'text', 3.5, false, null]) {
        const out = registry.serialize(value);
        expect(out.typeName).to.equal('json');
        expect(out.format).to.equal(SerializationFormat.Json);
        expect(registry.deserialize(out.typeName, out.bytes, out.format)).to.deep.equal(value);
      }
    });

    it('keeps nested Uint8Array values (Buffers too) as bytes', () => {
      const registry = new SerializationRegistry();
      const value = { a: new Uint8Array([0, 255]), b: [Buffer.from('hi')] };
      const out = registry.serialize(value);
      const back = registry.deserialize(out.typeName, out.bytes, out.format) as {
        a: Uint8Array;
        b: Uint8Array[];
      };
      expect(back.a).to.be.instanceOf(Uint8Array);
      expect([...back.a]).to.deep.equal([0, 255]);
      expect(Buffer.from(back.b[0]!).toString()).to.equal('hi');
    });

    it('re-tags a tagged plain object that has no protobuf type', () => {
      const registry = new SerializationRegistry();
      const out = registry.serialize(withTypeName('app.Hello', { who: 'me' }));
      expect(out.typeName).to.equal('app.Hello');
      expect(out.format).to.equal(SerializationFormat.Json);
      const back = registry.deserialize(out.typeName, out.bytes, out.format) as object;
      expect(back).to.deep.equal({ who: 'me' });
      expect(registry.typeNameOf(back)).to.equal('app.Hello');
      expect(Object.keys(back)).to.deep.equal(['who']);
    });

    it('throws UnknownTypeError for undefined, SerializationError for values JSON cannot carry', () => {
      const registry = new SerializationRegistry();
      expect(() => registry.serialize(undefined)).to.throw(UnknownTypeError);
      expect(() => registry.serialize(() => 1)).to.throw(SerializationError);
    });
  });

  describe('bytes', () => {
    it('passes a Uint8Array through as bytes', () => {
      const registry = new SerializationRegistry();
      const data = new Uint8Array([9, 8, 7]);
      const out = registry.serialize(data);
      expect(out.typeName).to.equal('bytes');
      expect(out.bytes).to.equal(data);
      expect([...(registry.deserialize(out.typeName, out.bytes) as Uint8Array)]).to.deep.equal([
        9, 8, 7,
      ]);
    });
  });

  describe('errors', () => {
    it('keeps the class name, code and message of an Error', () => {
      const registry = new SerializationRegistry();
      class InsufficientFunds extends Error {
        override readonly name = 'InsufficientFunds';
        readonly code = 'ERR_FUNDS';
      }
      const out = registry.serialize(new InsufficientFunds('balance 3 < 5'));
      expect(out.format).to.equal(SerializationFormat.Error);
      const back = registry.deserialize(out.typeName, out.bytes, out.format) as RemoteError;
      expect(back).to.be.instanceOf(RemoteError);
      expect(back).to.be.instanceOf(Error);
      expect(back.name).to.equal('InsufficientFunds');
      expect(back.code).to.equal('ERR_FUNDS');
      expect(back.message).to.equal('balance 3 < 5');
    });

    it('rebuilds a Granary error as its own class', () => {
      const registry = new SerializationRegistry();
      const out = registry.serialize(new DeadLetterError('n:1/$9', 'not-found'));
      const back = registry.deserialize(out.typeName, out.bytes, out.format) as DeadLetterError;
      expect(back).to.be.instanceOf(DeadLetterError);
      expect(back.name).to.equal('DeadLetterError');
      expect(back.code).to.equal('ERR_DEAD_LETTER');
      expect(back.message).to.equal('message to n:1/$9 went to dead letters (not-found)');
    });

    it('gives a code-less error the ERR_REMOTE code', () => {
      const registry = new SerializationRegistry();
      const out = registry.serialize(new TypeError('bad'));
      const back = registry.deserialize(out.typeName, out.bytes, out.format) as RemoteError;
      expect(back.name).to.equal('TypeError');
      expect(back.code).to.equal('ERR_REMOTE');
    });
  });
});

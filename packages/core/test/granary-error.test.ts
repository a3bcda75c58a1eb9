import { expect } from 'chai';
import { join } from 'node:path';
import { checkErrorClasses, loadModuleCopy } from '@granary/testkit';
import {
  AbortError,
  EndpointUnavailableError,
  GranaryError,
  InvalidArgumentError,
  InvalidOptionError,
  MailboxFullError,
  RemoteError,
  TimeoutError,
  UnknownKindError,
  registerErrorClasses,
} from '../src/index';
import { SerializationRegistry } from '../src/serialization/serialization-registry';
import * as coreIndex from '../src/index';

/** A second instance of this package's compiled index, as another installed copy would be. */
function otherCopy(): typeof coreIndex {
  return loadModuleCopy<typeof coreIndex>(join(__dirname, '../src/index.js'));
}

/** Through the serialization the remote uses: what a node receives for `error`. */
function overTheWire(error: Error, registry = new SerializationRegistry()): unknown {
  const out = registry.serialize(error);
  return registry.deserialize(out.typeName, out.bytes, out.format);
}

class InsufficientFundsError extends GranaryError {
  static override readonly code = 'ERR_TEST_INSUFFICIENT_FUNDS';
  override readonly name = 'InsufficientFundsError';
  constructor(readonly balance: number) {
    super(`balance ${balance} is too low`);
  }
}

describe('GranaryError', () => {
  it('every error class of @granary/core extends it, has its code, and is() works across copies and the wire', () => {
    expect(checkErrorClasses(coreIndex, { copy: otherCopy() })).to.deep.equal([]);
  });

  describe('code', () => {
    it('is the static code of the class, on every instance', () => {
      expect(new TimeoutError('a/b', 5).code).to.equal(TimeoutError.code).and.equal('ERR_TIMEOUT');
      expect(new InsufficientFundsError(3).code).to.equal('ERR_TEST_INSUFFICIENT_FUNDS');
      expect(new GranaryError('x').code).to.equal('ERR_GRANARY');
    });

    it('keeps a RemoteError the name and code it arrived with', () => {
      const e = new RemoteError('FooError', 'ERR_FOO', 'foo');
      expect(e).to.include({ name: 'FooError', code: 'ERR_FOO', message: 'foo' });
    });
  });

  describe('is', () => {
    it('matches instances of the class and of its subclasses, not of siblings', () => {
      const timeout = new TimeoutError('a/b', 5);
      expect(TimeoutError.is(timeout)).to.equal(true);
      expect(GranaryError.is(timeout)).to.equal(true);
      expect(MailboxFullError.is(timeout)).to.equal(false);
      expect(InvalidOptionError.is(new InvalidArgumentError('x', 'bad'))).to.equal(false);
    });

    it('is false for values that are not errors of the class', () => {
      for (const v of [undefined, null, 'ERR_TIMEOUT', 42, {}, new Error('x')]) {
        expect(TimeoutError.is(v), String(v)).to.equal(false);
      }
    });

    it('matches a plain object or Error that carries the code (another copy, or hand-made)', () => {
      const plain = Object.assign(new Error('late'), { name: 'TimeoutError', code: 'ERR_TIMEOUT' });
      expect(TimeoutError.is(plain)).to.equal(true);
      expect(TimeoutError.is({ code: 'ERR_TIMEOUT' })).to.equal(true);
      expect(MailboxFullError.is(plain)).to.equal(false);
    });

    it('matches errors made by another copy of the package, where instanceof does not', () => {
      const other = otherCopy();
      expect(other.TimeoutError).to.not.equal(TimeoutError);
      const theirs = new other.TimeoutError('a/b', 5);
      expect(theirs).to.not.be.instanceOf(TimeoutError);
      expect(TimeoutError.is(theirs)).to.equal(true);
      expect(GranaryError.is(theirs)).to.equal(true);
      expect(MailboxFullError.is(theirs)).to.equal(false);
      // And the other way round: their classes recognise ours.
      expect(other.TimeoutError.is(new TimeoutError('a/b', 5))).to.equal(true);
      expect(other.GranaryError.is(new UnknownKindError('k'))).to.equal(true);
    });

    it('matches a base class through the class chain of another copy', () => {
      const other = otherCopy();
      class TheirBase extends other.GranaryError {
        static override readonly code: string = 'ERR_TEST_BASE';
      }
      class TheirLeaf extends TheirBase {
        static override readonly code = 'ERR_TEST_LEAF';
      }
      class OurBase extends GranaryError {
        static override readonly code: string = 'ERR_TEST_BASE';
      }
      const leaf = new TheirLeaf('x');
      expect(leaf.code).to.equal('ERR_TEST_LEAF');
      expect(OurBase.is(leaf)).to.equal(true);
      expect(GranaryError.is(leaf)).to.equal(true);
    });
  });

  describe('over the wire', () => {
    it('comes back as its own class with its fields, and is() holds', () => {
      const back = overTheWire(new MailboxFullError('n:1/p', 7));
      expect(back).to.be.instanceOf(MailboxFullError);
      expect(MailboxFullError.is(back)).to.equal(true);
      expect(back).to.include({
        name: 'MailboxFullError',
        code: 'ERR_MAILBOX_FULL',
        target: 'n:1/p',
        capacity: 7,
      });
    });

    it('comes back as a RemoteError when the code has no class here; is() matches it by code', () => {
      const back = overTheWire(new InsufficientFundsError(3));
      expect(back).to.be.instanceOf(RemoteError);
      expect(InsufficientFundsError.is(back)).to.equal(true);
      expect(back).to.include({ name: 'InsufficientFundsError', balance: 3 });
    });

    it('comes back as its own class once registered', () => {
      registerErrorClasses(InsufficientFundsError);
      const back = overTheWire(new InsufficientFundsError(3));
      expect(back).to.be.instanceOf(InsufficientFundsError);
      expect((back as InsufficientFundsError).balance).to.equal(3);
    });

    it('matches by code when another copy of the package made the error', () => {
      const back = overTheWire(new (otherCopy().DeadLetterError)('n:1/x', 'not-found'));
      expect(coreIndex.DeadLetterError.is(back)).to.equal(true);
      expect(back).to.be.instanceOf(coreIndex.DeadLetterError);
    });

    it('carries the cause, rebuilt the same way', () => {
      const back = overTheWire(new AbortError('a/b', new TimeoutError('c/d', 9))) as AbortError;
      expect(AbortError.is(back)).to.equal(true);
      expect(TimeoutError.is(back.cause)).to.equal(true);
      expect(back.cause).to.include({ target: 'c/d', timeoutMs: 9 });
    });

    it('comes back without a captured stack when its class is stackless', () => {
      class RefusedError extends GranaryError {
        static override readonly code = 'ERR_TEST_REFUSED';
        static readonly stackless = true;
        override readonly name = 'RefusedError';
      }
      const registry = new SerializationRegistry();
      registry.registerErrorClass(RefusedError.code, RefusedError);
      const back = overTheWire(new RefusedError('too busy'), registry) as RefusedError;
      expect(back).to.be.instanceOf(RefusedError);
      expect(back.stack).to.equal('RefusedError: too busy');
      const plain = overTheWire(new TimeoutError('c/d', 9)) as TimeoutError;
      expect(plain.stack).to.include('    at ');
    });

    it("does not carry fields about the sender's own link (EndpointUnavailableError.inFlight)", () => {
      const sent = new EndpointUnavailableError('h:1', undefined, { inFlight: true });
      const back = overTheWire(sent) as EndpointUnavailableError;
      expect(EndpointUnavailableError.is(back)).to.equal(true);
      expect(back.address).to.equal('h:1');
      expect(back.inFlight).to.equal(undefined);
    });

    it('leaves out fields that are not plain data', () => {
      const e = Object.assign(new InvalidOptionError('x', 'bad'), {
        handle: { socket: 1 },
        fn: () => 1,
        list: ['a', 1, true],
      });
      const back = overTheWire(e) as unknown as Record<string, unknown>;
      expect(back.option).to.equal('x');
      expect(back.list).to.deep.equal(['a', 1, true]);
      expect(back).to.not.have.property('handle');
      expect(back).to.not.have.property('fn');
    });
  });
});

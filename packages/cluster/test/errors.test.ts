import { expect } from 'chai';
import { join } from 'node:path';
import { GranaryError, RemoteError, SerializationRegistry } from '@granary/core';
import { checkErrorClasses, loadModuleCopy } from '@granary/testkit';
import * as cluster from '../src/index';

/** This package's compiled index loaded a second time, as another installed copy would be. */
function otherCopy(): typeof cluster {
  return loadModuleCopy<typeof cluster>(join(__dirname, '../src/index.js'));
}

/** What a node receives when `error` is sent to it (the remote's serialization). */
function overTheWire(error: Error): unknown {
  const registry = new SerializationRegistry();
  const out = registry.serialize(error);
  return registry.deserialize(out.typeName, out.bytes, out.format);
}

describe('errors', () => {
  it('every error class extends GranaryError, has its own code, and is() works across copies and the wire', () => {
    expect(checkErrorClasses(cluster, { copy: otherCopy() })).to.deep.equal([]);
  });

  it('a NotOwnerError made by another copy crosses the wire with its fields, and is() holds', () => {
    const theirs = new (otherCopy().NotOwnerError)('counter', 'c-1', 'n:2');
    expect(theirs).to.not.be.instanceOf(cluster.NotOwnerError);
    expect(cluster.NotOwnerError.is(theirs)).to.equal(true);
    expect(cluster.ClusterError.is(theirs)).to.equal(true);
    const back = overTheWire(theirs);
    expect(back).to.be.instanceOf(cluster.NotOwnerError);
    expect(back).to.include({ kind: 'counter', identity: 'c-1', owner: 'n:2' });
  });

  it('a DeadlockError keeps its chain over the wire', () => {
    const back = overTheWire(new cluster.DeadlockError(['a/1', 'b/2', 'a/1']));
    expect(cluster.DeadlockError.is(back)).to.equal(true);
    expect((back as cluster.DeadlockError).chain).to.deep.equal(['a/1', 'b/2', 'a/1']);
  });

  it('a state error from another copy is a StateStoreError and a ClusterError by code', () => {
    const theirs = new (otherCopy().StateUnavailableError)('counter', 'c-1', 'read', 'down');
    expect(cluster.StateUnavailableError.is(theirs)).to.equal(true);
    expect(cluster.StateStoreError.is(theirs)).to.equal(true);
    expect(cluster.ClusterError.is(theirs)).to.equal(true);
    expect(cluster.InconsistentStateError.is(theirs)).to.equal(false);
    expect(cluster.StateStoreError.is(overTheWire(theirs))).to.equal(true);
  });

  describe('OverloadedError', () => {
    it('names the limit and the member that refused, has no stack, and crosses the wire alike', () => {
      const e = cluster.OverloadedError.of('loadShedding', 'node-1', 'counter', 'c-1');
      expect(e).to.include({ limit: 'loadShedding', member: 'node-1', code: 'ERR_OVERLOADED' });
      expect(e.message).to.match(/refused by node-1: .*\(loadShedding\); retry later/);
      expect(e.stack).to.not.include('    at ');
      const back = overTheWire(e);
      expect(back).to.be.instanceOf(cluster.OverloadedError);
      expect(back).to.include({ limit: 'loadShedding', member: 'node-1', identity: 'c-1' });
      expect((back as Error).stack).to.equal(`OverloadedError: ${e.message}`);
    });
  });

  describe('GrainError', () => {
    it("has the code ERR_GRAIN and keeps the thrown error's name and code as originalName and originalCode", () => {
      const e = new cluster.GrainError('counter', 'c-1', 'RangeError', 'ERR_BAD', 'bad value');
      expect(e).to.include({
        name: 'GrainError',
        code: 'ERR_GRAIN',
        originalName: 'RangeError',
        originalCode: 'ERR_BAD',
        message: 'bad value',
      });
      expect(cluster.GrainError.is(e)).to.equal(true);
      expect(GranaryError.is(e)).to.equal(true);
    });

    it('is not mistaken for the error the grain threw: only originalCode names that', () => {
      const e = new cluster.GrainError('counter', 'c-1', 'NotOwnerError', 'ERR_NOT_OWNER', 'x');
      expect(cluster.NotOwnerError.is(e)).to.equal(false);
      const back = overTheWire(e);
      expect(cluster.GrainError.is(back)).to.equal(true);
      expect(back).to.include({ originalCode: 'ERR_NOT_OWNER' });
    });
  });

  it('an error of a code this process has no class for comes back as a RemoteError that is() matches', () => {
    const plain = Object.assign(new Error('other version'), {
      name: 'JoinRefusedError',
      code: 'ERR_JOIN_REFUSED',
    });
    expect(cluster.JoinRefusedError.is(plain)).to.equal(true);
    const unknown = overTheWire(
      Object.assign(new Error('newer'), { name: 'FutureError', code: 'ERR_FUTURE' }),
    );
    expect(unknown).to.be.instanceOf(RemoteError).and.include({ code: 'ERR_FUTURE' });
  });
});

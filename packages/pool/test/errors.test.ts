import { expect } from 'chai';
import { join } from 'node:path';
import { AbortError, GranaryError, SerializationRegistry } from '@granary/core';
import { checkErrorClasses, loadModuleCopy } from '@granary/testkit';
import * as pool from '../src/index';

/** This package's compiled index loaded a second time, as another installed copy would be. */
function otherCopy(): typeof pool {
  return loadModuleCopy<typeof pool>(join(__dirname, '../src/index.js'));
}

describe('errors', () => {
  it('every error class extends GranaryError, has its own code, and is() works across copies and the wire', () => {
    expect(
      checkErrorClasses(pool, { copy: otherCopy(), sharedCodes: ['PoolAbortError'] }),
    ).to.deep.equal([]);
  });

  it('a PoolSaturatedError made by another copy crosses the wire with its fields, and is() holds', () => {
    const registry = new SerializationRegistry();
    const theirs = new (otherCopy().PoolSaturatedError)('n:1/pool', 4, 100);
    expect(theirs).to.not.be.instanceOf(pool.PoolSaturatedError);
    expect(pool.PoolSaturatedError.is(theirs)).to.equal(true);
    const out = registry.serialize(theirs);
    const back = registry.deserialize(out.typeName, out.bytes, out.format);
    expect(pool.PoolSaturatedError.is(back)).to.equal(true);
    expect(pool.PoolError.is(back)).to.equal(true);
    expect(back).to.be.instanceOf(pool.PoolSaturatedError);
    expect(back).to.include({ pool: 'n:1/pool', tried: 4, workerMailboxSize: 100 });
  });

  it("PoolAbortError and core's AbortError match each other by their shared code", () => {
    const aborted = new pool.PoolAbortError('stop');
    expect(aborted).to.include({ name: 'AbortError', code: 'ERR_ABORTED', cause: 'stop' });
    expect(AbortError.is(aborted)).to.equal(true);
    expect(pool.PoolAbortError.is(new AbortError('a/b'))).to.equal(true);
    expect(GranaryError.is(aborted)).to.equal(true);
  });
});

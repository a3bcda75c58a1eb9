import { expect } from 'chai';
import { InvalidArgumentError } from '@granary/core';
import { MAX_IDENTITY_BYTES } from '../../src/cluster';
import { GrainError } from '../../src/errors';
import type { Grain, GrainContext } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { MemoryNodes } from './memory-nodes';

/** Throws what it is asked to. */
class Thrower implements Grain {
  receive(ctx: GrainContext): unknown {
    throw (ctx.message as { throw: unknown }).throw;
  }
}

describe('grain calls: API input', function () {
  this.timeout(20_000);
  const nodes = new MemoryNodes(() => [kind('thrower', () => new Thrower(), { shardCount: 4 })]);
  before(() => nodes.add('a'));
  after(() => nodes.stopAll());

  it(`refuses an empty identity and one over ${MAX_IDENTITY_BYTES} bytes with InvalidArgumentError`, async () => {
    const [a] = nodes.nodes;
    for (const identity of ['', 'x'.repeat(MAX_IDENTITY_BYTES + 1), 'é'.repeat(600)]) {
      let error: unknown;
      try {
        await a!.request('thrower', identity, { throw: 1 });
      } catch (err) {
        error = err;
      }
      expect(error, `${identity.length} chars`).to.be.instanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument).to.equal('identity');
      expect(() => a!.send('thrower', identity, 'x')).to.throw(InvalidArgumentError);
    }
  });

  it('describes a thrown non-Error value to the caller (JSON or the string), never [object Object]', async () => {
    const [a] = nodes.nodes;
    const cases: Array<[unknown, string]> = [
      [{ reason: 'out of stock', sku: 7 }, '{"reason":"out of stock","sku":7}'],
      ['plain string', 'plain string'],
      [42, '42'],
    ];
    for (const [value, message] of cases) {
      let error: unknown;
      try {
        await a!.request('thrower', 'id-1', { throw: value });
      } catch (err) {
        error = err;
      }
      expect(error).to.be.instanceOf(GrainError);
      expect((error as GrainError).message)
        .to.contain(message)
        .and.not.to.contain('[object Object]');
    }
  });
});

import { expect } from 'chai';
import { performance } from 'node:perf_hooks';
import { errorsOnlyLogger } from '@granary/testkit';
import { Cluster } from '../../src/cluster';
import { kind } from '../../src/grains/kind';
import { CallerDelay } from '../../src/overload/caller-delay';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';

/** Resolves once `check()` holds, polled every 2 ms; rejects naming `what` after `timeoutMs`. */
function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const start = Date.now();
  return new Promise((resolve, reject) => {
    const poll = (): void => {
      if (check()) resolve();
      else if (Date.now() - start > timeoutMs)
        reject(new Error(`${what}: not within ${timeoutMs} ms`));
      else setTimeout(poll, 2);
    };
    poll();
  });
}

describe('caller admission (Cluster.canCall)', () => {
  describe('CallerDelay', () => {
    let delay: CallerDelay;
    afterEach(() => delay.close());

    it('says a call is too late while the loop is late and many calls are in flight, and forgets the delay once it is gone', async () => {
      delay = new CallerDelay(() => performance.now());
      const end = performance.now() + 80;
      while (performance.now() < end); // the member's own loop held for 80 ms
      // The probe's next turn measures the lateness (at least ~70 ms).
      await until(() => delay.delayMs >= 30, 'the probe measured the held loop');
      expect(delay.tooLate(50, 300), 'a 50 ms deadline behind a 30+ ms delay').to.equal(true);
      expect(delay.tooLate(50, 10), 'too few calls in flight to be saturated by them').to.equal(
        false,
      );
      expect(delay.tooLate(10_000, 300), 'a deadline far longer than the delay').to.equal(false);
      // Nothing holds the loop any more: the delay decays.
      await until(() => !delay.tooLate(50, 300), 'the delay decayed');
    });
  });

  describe('Cluster.canCall', () => {
    const gates: Array<() => void> = [];
    let c: Cluster | undefined;
    after(() => c?.shutdown({ graceful: false }));

    it('is false while maxOutstandingCalls are in flight, true again once they end', async () => {
      c = await Cluster.start({
        name: 'can-call',
        id: 'n1',
        provider: new MemoryProvider(new MemoryClusterTable(), { ttlMs: 10_000 }),
        kinds: [
          kind('hold', () => ({
            receive: () => new Promise<string>((resolve) => gates.push(() => resolve('done'))),
          })),
        ],
        overload: { maxOutstandingCalls: 2 },
        logger: errorsOnlyLogger,
      });
      expect(c.canCall()).to.equal(true);
      const calls = [c.request('hold', 'a', 1), c.request('hold', 'b', 1)];
      expect(c.canCall(), 'two calls in flight, the bound is two').to.equal(false);
      const refused = await c.request('hold', 'c', 1).catch((e: unknown) => e);
      expect(refused, 'the call canCall refused fails at once').to.have.property(
        'limit',
        'maxOutstandingCalls',
      );
      await until(() => gates.length === 2, 'both calls reached their grains');
      for (const open of gates) open();
      expect(await Promise.all(calls)).to.deep.equal(['done', 'done']);
      expect(c.canCall()).to.equal(true);
    });
  });
});

import { expect } from 'chai';
import { Cluster } from '../../src/cluster';
import type { ActivationEvent } from '../../src/grains/grains-options';
import type { Grain, GrainContext } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';

/** Releases the first turn when the test says so. */
let release: () => void = () => {};
let started: () => void = () => {};

/** First message: waits until released, then asks to deactivate; later ones answer at once. */
class Slow implements Grain {
  receive(ctx: GrainContext): unknown {
    if (ctx.message !== 'first') return ctx.message;
    started();
    return new Promise<void>((resolve) => (release = resolve)).then(() => {
      // The next call fills the one-message mailbox by now: Deactivate cannot be queued yet.
      ctx.deactivate();
      return 'first done';
    });
  }
}

describe('Activation: deactivate with a full bounded mailbox', function () {
  this.timeout(10_000);
  let cluster: Cluster;
  const log: ActivationEvent[] = [];
  let onLog: (() => void) | undefined;

  before(async () => {
    cluster = await Cluster.start({
      name: 'full-mailbox',
      id: 'm1',
      provider: new MemoryProvider(new MemoryClusterTable(), { ttlMs: 10_000 }),
      kinds: [kind('slow', () => new Slow(), { shardCount: 4, mailbox: { capacity: 1 } })],
      remote: { host: '127.0.0.1', port: 0 },
      onActivation: (e) => {
        log.push(e);
        onLog?.();
      },
    });
  });

  after(() => cluster.shutdown({ graceful: false }));

  it('ends the activation after the queued message instead of losing the Deactivate', async () => {
    const first = new Promise<void>((r) => (started = r));
    const a = cluster.request('slow', 's1', 'first', { timeoutMs: 5000 });
    await first;
    // The grain awaits in its first turn; this call fills its one-message mailbox.
    const b = cluster.request('slow', 's1', 'second', { timeoutMs: 5000 });
    await new Promise((r) => setImmediate(r));
    release();
    expect(await a).to.equal('first done');
    expect(await b).to.equal('second');
    const deactivated = (): ActivationEvent | undefined =>
      log.find((e) => e.identity === 's1' && e.type === 'deactivate');
    while (deactivated() === undefined) await new Promise<void>((r) => (onLog = r));
    expect(deactivated()!.reason).to.equal('requested');
    // The next call activates it again (a grain stuck deactivating would hold it forever).
    expect(await cluster.request('slow', 's1', 'third', { timeoutMs: 2000 })).to.equal('third');
    expect(log.filter((e) => e.identity === 's1' && e.type === 'activate')).to.have.length(2);
  });
});

import { recordingLogger, startRedis, type RedisHandle } from '@granary/testkit';
import { expect } from 'chai';
import { Cluster } from '../../src/cluster';
import type { GrainContext } from '../../src/grains/grain';
import { GrainWithState } from '../../src/grains/grain-state';
import { kind } from '../../src/grains/kind';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';
import { RedisStateStore } from '../../src/state/redis/redis-state-store';

class Counter extends GrainWithState<{ n: number }> {
  override async receive(_ctx: GrainContext): Promise<number> {
    this.state.n++;
    await this.writeState();
    return this.state.n;
  }
}

describe('Cluster.start while Redis restarts', function () {
  this.timeout(60_000);
  let redis: RedisHandle;
  let store: RedisStateStore | undefined;
  let member: Cluster | undefined;

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await member?.shutdown({ graceful: false });
    await store?.close();
    await redis?.stop();
  });

  it('waits for a Redis that is back within a few seconds instead of failing the start', async () => {
    // Redis restarting without persistence (down, then up empty) as the member starts.
    await redis.stop();
    store = new RedisStateStore({ url: redis.url, commandTimeoutMs: 500 });
    const back = new Promise<void>((resolve, reject) =>
      setTimeout(() => redis.restart().then(resolve, reject), 2000),
    );
    const { logger, lines } = recordingLogger();
    const startedAt = Date.now();
    try {
      member = await Cluster.start({
        name: 'store-open',
        id: 'a',
        provider: new MemoryProvider(new MemoryClusterTable()),
        kinds: [
          kind('counter', () => new Counter(), { state: { store, initial: () => ({ n: 0 }) } }),
        ],
        stateStores: [store],
        logger,
      });
    } finally {
      await back;
    }
    expect(Date.now() - startedAt).to.be.at.least(1500);
    const said = lines.filter((l) => l.msg.startsWith('state store unreachable at start'));
    expect(said, 'one warn line for the wait').to.have.length(1);
    expect(await member.request('counter', 'c', 'inc')).to.equal(1);
  });
});

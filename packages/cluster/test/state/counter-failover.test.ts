import { startRedis, type RedisHandle } from '@granary/testkit';
import { expect } from 'chai';
import { Cluster } from '../../src/cluster';
import { kind } from '../../src/grains/kind';
import { shardOf } from '../../src/placement/shard-of';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';
import { RedisStateStore } from '../../src/state/redis/redis-state-store';
import { countCodec, WriteThroughCounter } from './write-through-counter';
import { waitForClusters } from '../cluster/converge';
import { quiet } from '../grains/memory-nodes';

const SHARDS = 8;
const INCREMENTS = 1000;
const TTL_MS = 500;
const CALL_TIMEOUT_MS = 15_000;

let store: RedisStateStore;

describe('counter under failover: every acknowledged increment is stored (in-process members, real Redis)', function () {
  this.timeout(60_000);
  let redis: RedisHandle;
  const clusters: Cluster[] = [];

  before(async () => {
    redis = await startRedis();
    store = new RedisStateStore({ url: redis.url });
  });
  after(async () => {
    await Promise.all(clusters.map((c) => c.shutdown({ graceful: false }).catch(() => undefined)));
    await store.close();
    await redis.stop();
  });

  it('1,000 concurrent increments while the owner stops without draining and the next owner leaves: acknowledged ≤ final ≤ attempted', async () => {
    const table = new MemoryClusterTable();
    const providers = new Map<string, MemoryProvider>();
    const start = (id: string, hosts: boolean): Promise<Cluster> => {
      const provider = new MemoryProvider(table, { ttlMs: TTL_MS });
      providers.set(id, provider);
      return Cluster.start({
        name: 'counter-failover',
        id,
        provider,
        kinds: hosts
          ? [kind('counter', () => new WriteThroughCounter(store), { shardCount: SHARDS })]
          : [],
        remote: { host: '127.0.0.1', port: 0 },
        claimRetryMs: 50,
        requestTimeoutMs: CALL_TIMEOUT_MS,
        logger: quiet,
      });
    };
    const members = [await start('m1', true), await start('m2', true), await start('m3', true)];
    const caller = await start('caller', false);
    clusters.push(...members, caller);
    const shard = shardOf('total', SHARDS);
    const ownerOf = (): Cluster | undefined => members.find((m) => m.canServe('counter', shard));
    await waitForClusters(clusters, () => ownerOf() !== undefined, 'the counter shard is held');

    let acknowledged = 0;
    const failures: string[] = [];
    const events: string[] = [];
    let killAt = Promise.resolve();
    const calls = Array.from({ length: INCREMENTS }, () =>
      caller
        .request('counter', 'total', 'inc', { timeoutMs: CALL_TIMEOUT_MS })
        .then(() => void acknowledged++)
        .catch(
          (err: Error) => void failures.push(`${err.name}:${(err as { code?: string }).code}`),
        ),
    );

    const waitAcks = async (n: number): Promise<void> => {
      const until = Date.now() + 20_000;
      while (acknowledged + failures.length < n) {
        if (Date.now() > until) throw new Error(`timed out waiting for ${n} answers`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    await waitAcks(150);
    const first = ownerOf()!;
    events.push(`kill ${first.self?.id}`);
    providers.get(first.self!.id)!.crash();
    killAt = first.shutdown({ graceful: false });
    await waitAcks(500);
    const second = ownerOf();
    if (second && second !== first) {
      events.push(`leave ${second.self?.id}`);
      await second.shutdown({ graceful: true });
    }
    await killAt;
    await Promise.all(calls);

    const record = await store.read('counter', 'total');
    const final = record ? countCodec.decode(record.state).n : 0;
    expect(events.length, events.join(', ')).to.equal(2);
    expect(acknowledged + failures.length).to.equal(INCREMENTS);
    expect(acknowledged, `final ${final}, failures ${failures.join(' ')}`).to.be.at.most(final);
    // The stopped owner said goodbye after finishing its turns: calls it had not answered are
    // safe to retry, so none is applied twice.
    expect(final, `acknowledged ${acknowledged}`).to.be.at.most(INCREMENTS);
  });
});

import { join } from 'node:path';
import { Cluster, EtcdProvider } from '@granary/cluster';
import { type RedisHandle, silentLogger, startRedis, TestCluster } from '@granary/testkit';
import { Redis } from 'ioredis';
import { defineBenchmark, percentile } from '../harness';
import { inFlight } from '../in-flight';

/** Calls kept outstanding at once (the 1,000 in flight), one grain per slot. */
const IN_FLIGHT = 1000;
/** Calls per repetition: 20 per slot, enough for a stable p99. */
const CALLS = 20_000;
/** The persistent-grain member entry script of @granary/cluster's state tests. */
const STATE_NODE = join(
  __dirname,
  '../../../packages/cluster/dist/test/state/fixtures/state-node.js',
);
const CLUSTER = 'bench-state-nodes';

let redis: RedisHandle;
let raw: Redis;
let tc: TestCluster;
let client: Cluster;
let round = 0;
let paired = 0;

/** Baseline: read-modify-write of a counter with raw ioredis GET then SET, one key per slot. */
function rawGetSet(): Promise<{ perSecond: number; latencies: number[] }> {
  const prefix = `raw:${++round}:`;
  return inFlight(CALLS, IN_FLIGHT, async (n) => {
    const key = prefix + (n % IN_FLIGHT);
    const v = Number((await raw.get(key)) ?? 0);
    await raw.set(key, String(v + 1));
  });
}

/** Write-through increments (PersistentGrain.writeState per call), one grain per slot. */
function writeThrough(): Promise<{ perSecond: number; latencies: number[] }> {
  return inFlight(CALLS, IN_FLIGHT, (n) =>
    client.request('counter', `c-${n % IN_FLIGHT}`, 'inc', { timeoutMs: 30_000 }),
  );
}

export const benchmark = defineBenchmark({
  name: 'state-grains-nodes',
  description:
    'write-through grain calls (a PersistentGrain counter, writeState on every call) from a ' +
    'client member to a node process (etcd membership, Redis state), 1,000 in flight; baseline ' +
    'raw ioredis GET+SET at the same concurrency from the client process',
  repeats: 5,
  async setup() {
    redis = await startRedis();
    raw = new Redis(redis.url);
    tc = await TestCluster.start({
      size: 1,
      etcd: true,
      script: STATE_NODE,
      config: (ctx) => ({
        etcdEndpoints: ctx.etcdEndpoints,
        redisUrl: redis.url,
        id: ctx.id,
        cluster: CLUSTER,
        ttlSeconds: 3,
        shardCount: 64,
        reportWrites: false,
      }),
    });
    client = await Cluster.start({
      name: CLUSTER,
      id: 'bench-client',
      provider: new EtcdProvider({
        endpoints: tc.etcd!.endpoints,
        ttlSeconds: 3,
        prefix: '/granary-state',
        logger: silentLogger,
      }),
      kinds: [],
      remote: { host: '127.0.0.1', port: 0 },
      logger: silentLogger,
    });
    await tc.waitForConvergence();
    for (let i = 0; i < IN_FLIGHT; i++) await client.request('counter', `c-${i}`, 'inc');
  },
  async teardown() {
    await client?.shutdown({ graceful: false });
    await tc?.stop();
    raw?.disconnect();
    await redis?.stop();
  },
  cases: [
    {
      id: 'raw-get-set',
      metric: 'ops_per_s',
      run: async () => (await rawGetSet()).perSecond,
    },
    {
      id: 'grain-write-through',
      metric: 'calls_per_s',
      baseline: 'raw-get-set',
      run: async () => (await writeThrough()).perSecond,
    },
    {
      // Raw and write-through back to back in one repetition, in alternating order: the two
      // cases above run minutes apart, and on a shared 2-core box the load moves in between.
      id: 'write-through-vs-raw-paired',
      metric: 'ratio',
      run: async () => {
        const rawFirst = ++paired % 2 === 1;
        const a = rawFirst ? await rawGetSet() : await writeThrough();
        const b = rawFirst ? await writeThrough() : await rawGetSet();
        return rawFirst ? b.perSecond / a.perSecond : a.perSecond / b.perSecond;
      },
    },
    {
      id: 'raw-get-set-p99',
      metric: 'p99_ms',
      run: async () => percentile((await rawGetSet()).latencies, 99),
    },
    {
      id: 'grain-write-through-p99',
      metric: 'p99_ms',
      baseline: 'raw-get-set-p99',
      run: async () => percentile((await writeThrough()).latencies, 99),
    },
  ],
});

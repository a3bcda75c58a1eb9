import { join } from 'node:path';
import { Cluster, EtcdProvider, RedisReminderStore } from '@granary/cluster';
import { startRedis, TestCluster, type RedisHandle } from '@granary/testkit';
import { defineBenchmark } from '../harness';

/**
 * The soak: 10,000 reminders with a 1 s period on 3 member processes (real etcd and
 * Redis) for 60 s, checked like the acceptance test (`reminders-etcd-acceptance`, which runs the
 * same scenario with 600 reminders for 8 s in `npm test`): every (grain, name, tick) exactly
 * once, tardiness p99, grains passivating between fires.
 */
const REMINDERS = 10_000;
const PERIOD_MS = 1000;
const RUN_MS = 60_000;
const SHARDS = 64;
const IDLE_MS = 300;
const CLUSTER = 'rem-soak';

/** The cluster tests' node and ledger (built by `npm run build`). */
const DIST = join(__dirname, '../../../packages/cluster/dist/test/reminders');

interface Ledger {
  duplicates: number;
  update(tc: TestCluster): void;
  gaps(key: string, cut: number): { lost: number; skipped: number };
  lateness(q: number, from?: number, to?: number): number;
  count(): number;
}
interface LedgerClass {
  new (dueOf: (key: string, tick: number) => number): Ledger;
  activations(tc: TestCluster): { activations: number; deactivations: number };
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { FireLedger } = require(join(DIST, 'fire-ledger.js')) as { FireLedger: LedgerClass };

let redis: RedisHandle;

/** One soak run; the figure of the case is picked from its result. */
async function soak(): Promise<Record<string, number>> {
  const store = new RedisReminderStore({ url: redis.url });
  const tc = await TestCluster.start({
    size: 3,
    etcd: true,
    script: join(DIST, 'fixtures/reminder-node.js'),
    config: (ctx) => ({
      etcdEndpoints: ctx.etcdEndpoints,
      redisUrl: redis.url,
      id: ctx.id,
      cluster: CLUSTER,
      ttlSeconds: 3,
      shardCount: SHARDS,
      idleTimeoutMs: IDLE_MS,
    }),
  });
  const client = await Cluster.start({
    name: CLUSTER,
    id: 'client',
    provider: new EtcdProvider({
      endpoints: tc.etcd!.endpoints,
      ttlSeconds: 3,
      prefix: '/granary-rem',
    }),
    kinds: [],
    shardCount: SHARDS,
    remote: { host: '127.0.0.1', port: 0 },
    reminders: { store },
  });
  try {
    await tc.waitForConvergence();
    const base = new Map<string, number>();
    const ledger = new FireLedger((key, tick) => base.get(key)! + tick * PERIOD_MS);
    const start = Date.now() + 5000;
    for (let i = 0; i < REMINDERS; i += 500) {
      await Promise.all(
        Array.from({ length: 500 }, (_, j) => {
          const id = `g${i + j}`;
          const dueAt = start + Math.floor(((i + j) * PERIOD_MS) / REMINDERS);
          base.set(`${id}/beat`, dueAt);
          return client
            .reminders('beat', id)
            .set('beat', { dueAt, periodMs: PERIOD_MS, catchUp: 'all' });
        }),
      );
    }
    await new Promise((r) => setTimeout(r, start - Date.now() + RUN_MS));
    const cut = Date.now() - 1000;
    ledger.update(tc);
    let lost = 0;
    for (const key of base.keys()) lost += ledger.gaps(key, cut).lost;
    const act = FireLedger.activations(tc);
    const fires = ledger.count();
    return {
      fires,
      duplicates: ledger.duplicates,
      lost,
      p50: ledger.lateness(0.5, start + PERIOD_MS, cut),
      p99: ledger.lateness(0.99, start + PERIOD_MS, cut),
      activationsPerFire: act.activations / fires,
    };
  } finally {
    await client.shutdown({ graceful: false });
    await tc.stop();
    await store.close();
  }
}

let last: Record<string, number> | undefined;

export const benchmark = defineBenchmark({
  name: 'reminders-soak',
  description:
    `${REMINDERS} reminders (1 s period) on 3 member processes over real etcd and Redis for ` +
    `${RUN_MS / 1000} s: fires, ticks delivered twice (must be 0), ticks lost (must be 0), ` +
    'tardiness p50/p99 (grain receive - due; target p99 <= 50 ms), activations per fire (~1: ' +
    'grains passivate between fires). One run; every case reads the same run.',
  repeats: 1,
  warmup: 0,
  async setup() {
    redis = await startRedis();
  },
  teardown: () => redis.stop(),
  cases: [
    { id: 'fires', metric: 'fires', run: async () => (last = await soak()).fires! },
    { id: 'duplicate-ticks', metric: 'ticks', run: () => Promise.resolve(last!.duplicates!) },
    { id: 'lost-ticks', metric: 'ticks', run: () => Promise.resolve(last!.lost!) },
    { id: 'tardiness-p50', metric: 'p50_ms', run: () => Promise.resolve(last!.p50!) },
    { id: 'tardiness-p99', metric: 'p99_ms', run: () => Promise.resolve(last!.p99!) },
    {
      id: 'activations-per-fire',
      metric: 'ratio',
      run: () => Promise.resolve(last!.activationsPerFire!),
    },
  ],
});

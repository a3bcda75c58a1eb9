import { jsonStateCodec, PersistentState, RedisStateStore } from '@granary/cluster';
import { startRedis, type RedisHandle } from '@granary/testkit';
import { Redis } from 'ioredis';
import { defineBenchmark, percentile } from '../harness';

/** Operations kept outstanding at once (the 1,000 in flight). */
const IN_FLIGHT = 1000;
/** Operations per repetition: 20 per in-flight slot, enough for a stable p99 (20k samples). */
const OPS = 20_000;
/** Every write carries this shard epoch; one owner, so fencing never rejects here. */
const EPOCH = 1;

interface Counter {
  n: number;
}

const codec = jsonStateCodec<Counter>();

let redis: RedisHandle;
let raw: Redis;
let store: RedisStateStore;
let round = 0;

/** Runs OPS operations with IN_FLIGHT concurrent workers; worker `w` owns key/grain `w`. */
async function drive(
  op: (worker: number) => Promise<void>,
): Promise<{ opsPerS: number; p99Ms: number }> {
  const latencies = new Float64Array(OPS);
  let next = 0;
  const start = process.hrtime.bigint();
  const worker = async (w: number): Promise<void> => {
    while (next < OPS) {
      const i = next++;
      const t0 = process.hrtime.bigint();
      await op(w);
      latencies[i] = Number(process.hrtime.bigint() - t0) / 1e6;
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, (_, w) => worker(w)));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return { opsPerS: OPS / seconds, p99Ms: percentile(Array.from(latencies), 99) };
}

/** Baseline: a plain read-modify-write of a counter with raw ioredis GET then SET. */
function rawGetSet(): Promise<{ opsPerS: number; p99Ms: number }> {
  const prefix = `raw:${++round}:`;
  return drive(async (w) => {
    const key = prefix + w;
    const n = Number((await raw.get(key)) ?? 0);
    await raw.set(key, String(n + 1));
  });
}

/** RedisStateStore read-modify-write: read + decode, increment, encode + fenced write (Lua). */
function storeReadWrite(): Promise<{ opsPerS: number; p99Ms: number }> {
  const kind = `rmw${++round}`;
  return drive(async (w) => {
    const id = String(w);
    const record = await store.read(kind, id);
    const n = record ? codec.decode(record.state).n : 0;
    await store.write(kind, id, codec.encode({ n: n + 1 }), {
      expectedVersion: record?.version ?? null,
      epoch: EPOCH,
    });
  });
}

/** A write-through grain: state held by PersistentState (loaded once), every call writes it. */
async function writeThrough(): Promise<{ opsPerS: number; p99Ms: number }> {
  const kind = `wt${++round}`;
  const states = Array.from(
    { length: IN_FLIGHT },
    (_, w) =>
      new PersistentState<Counter>({
        store,
        kind,
        id: String(w),
        codec,
        epoch: () => EPOCH,
        initial: () => ({ n: 0 }),
      }),
  );
  await Promise.all(states.map((s) => s.load(Date.now() + 10_000)));
  return drive(async (w) => {
    const ps = states[w]!;
    ps.state = { n: ps.state.n + 1 };
    await ps.write();
  });
}

export const benchmark = defineBenchmark({
  name: 'state-redis',
  description:
    'grain state on Redis, 1,000 in flight: RedisStateStore read-modify-write (read + Lua CAS write) and a write-through PersistentState (one Lua CAS write per call) vs raw ioredis GET+SET of a counter',
  async setup() {
    redis = await startRedis();
    raw = new Redis(redis.url);
    store = new RedisStateStore({ url: redis.url });
    await raw.ping();
  },
  async teardown() {
    await store?.close();
    raw?.disconnect();
    await redis?.stop();
  },
  cases: [
    { id: 'raw-get-set', metric: 'ops_per_s', run: async () => (await rawGetSet()).opsPerS },
    {
      id: 'store-read-write',
      metric: 'ops_per_s',
      baseline: 'raw-get-set',
      run: async () => (await storeReadWrite()).opsPerS,
    },
    {
      id: 'persistent-state-write-through',
      metric: 'ops_per_s',
      baseline: 'raw-get-set',
      run: async () => (await writeThrough()).opsPerS,
    },
    { id: 'raw-get-set-p99', metric: 'p99_ms', run: async () => (await rawGetSet()).p99Ms },
    {
      id: 'store-read-write-p99',
      metric: 'p99_ms',
      baseline: 'raw-get-set-p99',
      run: async () => (await storeReadWrite()).p99Ms,
    },
    {
      id: 'persistent-state-write-through-p99',
      metric: 'p99_ms',
      baseline: 'raw-get-set-p99',
      run: async () => (await writeThrough()).p99Ms,
    },
  ],
});

import {
  Cluster,
  jsonStateCodec,
  kind,
  MemoryClusterTable,
  MemoryProvider,
  PersistentGrain,
  RedisStateStore,
  shardOf,
  type GrainContext,
} from '@granary/cluster';
import { startRedis, type RedisHandle } from '@granary/testkit';
import { Redis } from 'ioredis';
import { defineBenchmark, percentile } from '../harness';

/** Calls kept outstanding at once (the 1,000 in flight), one grain per slot. */
const IN_FLIGHT = 1000;
/** Calls per repetition: 20 per slot, enough for a stable p99. */
const CALLS = 20_000;
/** Shards of the counter kind: enough that both members own some. */
const SHARDS = 64;
/** Long enough that no grain passivates during the run (activation is not what we measure). */
const IDLE_MS = 10 * 60_000;
/** Generous per-call deadline: a timed-out call fails the run instead of skewing it. */
const CALL_TIMEOUT_MS = 30_000;

interface Count {
  n: number;
}

const codec = jsonStateCodec<Count>();
let redis: RedisHandle;
let raw: Redis;
let store: RedisStateStore;
let caller: Cluster;
let host: Cluster;
/** Grain ids whose shard the host (not the caller) owns, so every call crosses the network. */
let remoteIds: string[] = [];

/** A write-through counter: every 'inc' writes its state (fenced by version and epoch). */
class Counter extends PersistentGrain<Count> {
  constructor() {
    super({ store, codec, initial: () => ({ n: 0 }) });
  }

  async receive(ctx: GrainContext): Promise<unknown> {
    this.state = { n: this.state.n + 1 };
    if (ctx.message === 'inc') await this.writeState();
    return this.state.n;
  }
}

async function drive(
  op: (slot: number) => Promise<unknown>,
): Promise<{ perS: number; p99Ms: number }> {
  const latencies = new Float64Array(CALLS);
  let next = 0;
  const start = process.hrtime.bigint();
  const worker = async (slot: number): Promise<void> => {
    while (next < CALLS) {
      const i = next++;
      const t0 = process.hrtime.bigint();
      await op(slot);
      latencies[i] = Number(process.hrtime.bigint() - t0) / 1e6;
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, (_, slot) => worker(slot)));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return { perS: CALLS / seconds, p99Ms: percentile(Array.from(latencies), 99) };
}

let round = 0;
let paired = 0;
/** Baseline: read-modify-write of a counter with raw ioredis GET then SET. */
function rawGetSet(): Promise<{ perS: number; p99Ms: number }> {
  const prefix = `raw:${++round}:`;
  return drive(async (slot) => {
    const key = prefix + slot;
    const n = Number((await raw.get(key)) ?? 0);
    await raw.set(key, String(n + 1));
  });
}

function grainCalls(message: 'inc' | 'peek'): Promise<{ perS: number; p99Ms: number }> {
  return drive((slot) =>
    caller.request('counter', remoteIds[slot]!, message, { timeoutMs: CALL_TIMEOUT_MS }),
  );
}

export const benchmark = defineBenchmark({
  name: 'state-grains',
  description:
    'write-through grain calls between 2 members (in one process, gRPC over loopback, Redis state), 1,000 in flight, every call to a grain on the other member; baseline raw ioredis GET+SET at the same concurrency',
  async setup() {
    redis = await startRedis();
    raw = new Redis(redis.url);
    store = new RedisStateStore({ url: redis.url });
    const table = new MemoryClusterTable();
    const start = (id: string): Promise<Cluster> =>
      Cluster.start({
        name: 'bench-state',
        id,
        provider: new MemoryProvider(table),
        kinds: [
          kind('counter', () => new Counter(), { idleTimeoutMs: IDLE_MS, shardCount: SHARDS }),
        ],
        remote: { host: '127.0.0.1', port: 0 },
        requestTimeoutMs: CALL_TIMEOUT_MS,
      });
    caller = await start('caller');
    host = await start('host');
    const deadline = Date.now() + 10_000;
    while (remoteIds.length < IN_FLIGHT) {
      remoteIds = [];
      for (let i = 0; remoteIds.length < IN_FLIGHT && i < IN_FLIGHT * 20; i++) {
        const id = `g${i}`;
        const shard = shardOf(id, SHARDS);
        if (host.canServe('counter', shard) && !caller.canServe('counter', shard))
          remoteIds.push(id);
      }
      if (remoteIds.length < IN_FLIGHT) {
        if (Date.now() > deadline) throw new Error('the two members did not split the shards');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  },
  async teardown() {
    await caller?.shutdown({ graceful: false });
    await host?.shutdown({ graceful: false });
    await store?.close();
    raw?.disconnect();
    await redis?.stop();
  },
  cases: [
    { id: 'raw-get-set', metric: 'ops_per_s', run: async () => (await rawGetSet()).perS },
    {
      id: 'grain-write-through',
      metric: 'calls_per_s',
      baseline: 'raw-get-set',
      run: async () => (await grainCalls('inc')).perS,
    },
    {
      id: 'grain-call-no-write',
      metric: 'calls_per_s',
      baseline: 'raw-get-set',
      run: async () => (await grainCalls('peek')).perS,
    },
    {
      // Raw and write-through back to back in one repetition, in alternating order: the two
      // cases above run minutes apart, and on a shared 2-core box the load moves in between.
      id: 'write-through-vs-raw-paired',
      metric: 'ratio',
      run: async () => {
        const rawFirst = ++paired % 2 === 1;
        const a = rawFirst ? await rawGetSet() : await grainCalls('inc');
        const b = rawFirst ? await grainCalls('inc') : await rawGetSet();
        return rawFirst ? b.perS / a.perS : a.perS / b.perS;
      },
    },
    { id: 'raw-get-set-p99', metric: 'p99_ms', run: async () => (await rawGetSet()).p99Ms },
    {
      id: 'grain-write-through-p99',
      metric: 'p99_ms',
      baseline: 'raw-get-set-p99',
      run: async () => (await grainCalls('inc')).p99Ms,
    },
  ],
});

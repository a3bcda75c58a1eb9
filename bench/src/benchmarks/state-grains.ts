import {
  Cluster,
  jsonStateCodec,
  type Durability,
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

/**
 * One counter kind per durability level, each on its own Redis configured for it:
 * `counter` is today's write-through (Redis without persistence, durability said 'none'),
 * the others run the level on the server it needs.
 */
const LEVELS: ReadonlyArray<{ kind: string; durability: Durability }> = [
  { kind: 'counter', durability: 'none' },
  { kind: 'counter-restart', durability: 'restart' },
  { kind: 'counter-fsync', durability: 'fsync' },
  { kind: 'counter-replicated', durability: 'replicated' },
];

/**
 * The levels the selected cases use (BENCH_CASES): today's always, another only when one of its
 * cases runs, so an A/B run of today's cases starts what the benchmark started before the levels.
 */
function levelsInUse(): ReadonlyArray<{ kind: string; durability: Durability }> {
  const only = process.env.BENCH_CASES?.split(',').filter((id) => id !== '');
  if (!only?.length) return LEVELS;
  return LEVELS.filter(
    (level) => level.kind === 'counter' || only.some((id) => id.includes(level.durability)),
  );
}

const servers: RedisHandle[] = [];
let raw: Redis;
const stores = new Map<string, RedisStateStore>();
let caller: Cluster;
let host: Cluster;
/** Per kind, grain ids whose shard the host (not the caller) owns: every call crosses the network. */
const remoteIds = new Map<string, string[]>();

/** A write-through counter: every 'inc' writes its state (fenced by version and epoch). */
class Counter extends PersistentGrain<Count> {
  constructor(store: RedisStateStore) {
    super({ store, codec, initial: () => ({ n: 0 }) });
  }

  async receive(ctx: GrainContext): Promise<unknown> {
    this.state = { n: this.state.n + 1 };
    if (ctx.message === 'inc') await this.writeState();
    return this.state.n;
  }
}

/** The Redis servers of each level: what the level needs, nothing more. */
async function startServers(
  levels: ReadonlyArray<{ durability: Durability }>,
): Promise<Map<Durability, string>> {
  const urls = new Map<Durability, string>();
  const start = async (options: Parameters<typeof startRedis>[0]): Promise<RedisHandle> => {
    const server = await startRedis(options);
    servers.push(server);
    return server;
  };
  const used = new Set(levels.map((level) => level.durability));
  urls.set('none', (await start({ appendonly: false })).url);
  if (used.has('restart')) urls.set('restart', (await start({ appendfsync: 'no' })).url);
  if (used.has('fsync')) urls.set('fsync', (await start({ appendfsync: 'always' })).url);
  if (!used.has('replicated')) return urls;
  const primary = await start({ appendfsync: 'no' });
  await start({ appendfsync: 'no', replicaOf: primary });
  const probe = new Redis(primary.url);
  try {
    // Online, and past the append-only rewrite that follows its first sync.
    for (let i = 0; ; i++) {
      await probe.set('bench:probe', String(i));
      if ((await probe.wait(1, 1000)) === 1) break;
      if (i > 100) throw new Error('the replica did not come online');
    }
  } finally {
    probe.disconnect();
  }
  urls.set('replicated', primary.url);
  return urls;
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

function grainCalls(
  message: 'inc' | 'peek',
  kindName = 'counter',
): Promise<{ perS: number; p99Ms: number }> {
  const ids = remoteIds.get(kindName)!;
  return drive((slot) =>
    caller.request(kindName, ids[slot]!, message, { timeoutMs: CALL_TIMEOUT_MS }),
  );
}

/** Write-through at `level` and today's, back to back in one repetition, alternating the order. */
const pairedTurns = new Map<string, number>();
async function pairedWithToday(kindName: string): Promise<number> {
  const turn = (pairedTurns.get(kindName) ?? 0) + 1;
  pairedTurns.set(kindName, turn);
  const todayFirst = turn % 2 === 1;
  const a = await grainCalls('inc', todayFirst ? 'counter' : kindName);
  const b = await grainCalls('inc', todayFirst ? kindName : 'counter');
  return todayFirst ? b.perS / a.perS : a.perS / b.perS;
}

export const benchmark = defineBenchmark({
  name: 'state-grains',
  description:
    "write-through grain calls between 2 members (in one process, gRPC over loopback, Redis state), 1,000 in flight, every call to a grain on the other member; baseline raw ioredis GET+SET at the same concurrency; then per durability level (restart: AOF written before each reply, appendfsync no; fsync: appendfsync always; replicated: WAIT 1 per batch to a replica) against today's write-through (no persistence, durability none)",
  async setup() {
    const levels = levelsInUse();
    const urls = await startServers(levels);
    raw = new Redis(urls.get('none')!);
    for (const level of levels) {
      const store = new RedisStateStore({
        url: urls.get(level.durability)!,
        durability: level.durability,
      });
      await store.open();
      stores.set(level.kind, store);
    }
    const table = new MemoryClusterTable();
    const start = (id: string): Promise<Cluster> =>
      Cluster.start({
        name: 'bench-state',
        id,
        provider: new MemoryProvider(table),
        kinds: levels.map((level) =>
          kind(level.kind, () => new Counter(stores.get(level.kind)!), {
            idleTimeoutMs: IDLE_MS,
            shardCount: SHARDS,
          }),
        ),
        stateStores: [...stores.values()],
        remote: { host: '127.0.0.1', port: 0 },
        requestTimeoutMs: CALL_TIMEOUT_MS,
      });
    caller = await start('caller');
    host = await start('host');
    const deadline = Date.now() + 10_000;
    for (const level of levels) {
      let ids: string[] = [];
      while (ids.length < IN_FLIGHT) {
        ids = [];
        for (let i = 0; ids.length < IN_FLIGHT && i < IN_FLIGHT * 20; i++) {
          const id = `g${i}`;
          const shard = shardOf(id, SHARDS);
          if (host.canServe(level.kind, shard) && !caller.canServe(level.kind, shard)) ids.push(id);
        }
        if (ids.length < IN_FLIGHT) {
          if (Date.now() > deadline) throw new Error('the two members did not split the shards');
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      remoteIds.set(level.kind, ids);
    }
  },
  async teardown() {
    await caller?.shutdown({ graceful: false });
    await host?.shutdown({ graceful: false });
    for (const store of stores.values()) await store.close();
    raw?.disconnect();
    for (const server of servers.splice(0)) await server.stop();
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
    // Issue 25: write-through per durability level, each against today's ('counter': a
    // Redis without persistence, durability 'none'), in the same run.
    ...LEVELS.slice(1).map((level) => ({
      id: `grain-write-through-${level.durability}`,
      metric: 'calls_per_s',
      baseline: 'grain-write-through',
      run: async () => (await grainCalls('inc', level.kind)).perS,
    })),
    ...LEVELS.slice(1).map((level) => ({
      // Back to back with today's in one repetition: the ratio without the drift between cases.
      id: `${level.durability}-vs-write-through-paired`,
      metric: 'ratio',
      run: () => pairedWithToday(level.kind),
    })),
    { id: 'raw-get-set-p99', metric: 'p99_ms', run: async () => (await rawGetSet()).p99Ms },
    {
      id: 'grain-write-through-p99',
      metric: 'p99_ms',
      baseline: 'raw-get-set-p99',
      run: async () => (await grainCalls('inc')).p99Ms,
    },
  ],
});

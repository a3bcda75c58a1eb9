import {
  Cluster,
  MemoryClusterTable,
  MemoryProvider,
  ownerOf,
  shardOf,
  type Member,
  type Topology,
} from '@granary/cluster';
import { defineBenchmark } from '../harness';

/** Lookups per repetition: enough for ~100 ms of work at the slowest case. */
const OPS = 2_000_000;
const SHARDS = 256;
const KIND = 'K';

/** A 16-member topology, hosting KIND on every member. */
function topology(version: number): Topology {
  const members: Member[] = Array.from({ length: 16 }, (_, i) => ({
    id: `member-${i}`,
    address: `10.0.0.${i}:4000`,
    kinds: [KIND],
    incarnation: 1,
    status: 'up',
  }));
  return { version, members };
}

const ids = Array.from({ length: 1024 }, (_, i) => `player-${i * 7919}`);
let cluster: Cluster;
let sink = 0;

function perSecond(fn: () => void): number {
  const start = process.hrtime.bigint();
  fn();
  return OPS / (Number(process.hrtime.bigint() - start) / 1e9);
}

export const benchmark = defineBenchmark({
  name: 'membership-placement',
  description:
    'Per-message placement costs: shardOf (FNV-1a of the identity), ownerOf on a cached ring (16 members, 256 shards), canServe (the per-turn fencing check), and a ring rebuild per new topology',
  async setup() {
    cluster = await Cluster.start({
      name: 'bench',
      id: 'a',
      provider: new MemoryProvider(new MemoryClusterTable()),
      kinds: [{ name: KIND, shardCount: SHARDS }],
    });
    await new Promise<void>((resolve) => {
      const check = (): void => {
        if (cluster.heldShards(KIND).length === SHARDS) resolve();
        else setTimeout(check, 5);
      };
      check();
    });
  },
  async teardown() {
    await cluster.shutdown({ graceful: false });
    if (sink === 42) process.stdout.write('');
  },
  cases: [
    {
      id: 'shardOf',
      metric: 'ops_per_s',
      run: async () =>
        perSecond(() => {
          for (let i = 0; i < OPS; i++) sink += shardOf(ids[i & 1023], SHARDS);
        }),
    },
    {
      id: 'ownerOf (cached ring)',
      metric: 'ops_per_s',
      run: async () => {
        const t = topology(1);
        return perSecond(() => {
          for (let i = 0; i < OPS; i++) sink += ownerOf(KIND, i & (SHARDS - 1), t)!.incarnation;
        });
      },
    },
    {
      id: 'canServe',
      metric: 'ops_per_s',
      run: async () =>
        perSecond(() => {
          for (let i = 0; i < OPS; i++) sink += cluster.canServe(KIND, i & (SHARDS - 1)) ? 1 : 0;
        }),
    },
    {
      id: 'ring rebuild + 256 owners (new topology)',
      metric: 'ms',
      run: async () => {
        const start = process.hrtime.bigint();
        const t = topology(2);
        for (let s = 0; s < SHARDS; s++) sink += ownerOf(KIND, s, t)!.incarnation;
        return Number(process.hrtime.bigint() - start) / 1e6;
      },
    },
  ],
});

import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Cluster, DEFAULT_CLUSTER_OPTIONS, ownerOf, type Member } from '@granary/cluster';
import { collectGarbage, defineBenchmark, type BenchCase } from '../harness';
import { scenario } from '../membership/scenario';
import { SyntheticProvider } from '../membership/synthetic-provider';

const KINDS = ['A', 'B', 'C', 'D'];
/** Longer than the placement pass's longest coalescing delay (1 s) plus the work after it. */
const SETTLE_MS = 2500;

function member(id: string): Member {
  const shards = {
    shardCount: DEFAULT_CLUSTER_OPTIONS.shardCount,
    ranges: DEFAULT_CLUSTER_OPTIONS.claimRanges,
  };
  return {
    id,
    address: `${id}:4000`,
    kinds: KINDS,
    status: 'up',
    incarnation: 1,
    kindShards: Object.fromEntries(KINDS.map((k) => [k, shards])),
  };
}

function heapBytes(): number {
  collectGarbage();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

interface ChangeFigures {
  maxTurnMs: number;
  cpuMs: number;
}

/** One membership change seen by a real member among `n` synthetic ones. */
async function change(n: number, kind: 'join' | 'leave'): Promise<ChangeFigures> {
  const others = Array.from({ length: n }, (_, i) =>
    member(`member-${String(i).padStart(5, '0')}`),
  );
  const provider = new SyntheticProvider(others);
  const cluster = await Cluster.start({
    name: 'placement',
    id: 'member-real',
    provider,
    kinds: KINDS.map((name) => ({ name })),
  });
  try {
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const next =
      kind === 'join' ? [...others, member('member-new')] : others.filter((_, i) => i !== n >> 1);
    collectGarbage();
    const lag = monitorEventLoopDelay({ resolution: 1 });
    lag.enable();
    const cpu0 = process.cpuUsage();
    provider.setOthers(next);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const cpu = process.cpuUsage(cpu0);
    lag.disable();
    return { maxTurnMs: lag.max / 1e6, cpuMs: (cpu.user + cpu.system) / 1000 };
  } finally {
    await cluster.shutdown({ graceful: false });
  }
}

/** Bytes the placement of one topology of `n` members (4 kinds) keeps alive. */
function placementBytes(n: number): number {
  // The last placement computed stays cached with a link to the one before it (the next one
  // derives from it): place two tiny topologies first, so that neither the last nor the one
  // before is a large one of an earlier case, and the figure is this placement's bytes, not the
  // difference from a large one (with one tiny placement it came out negative).
  for (const id of ['member-tiny-1', 'member-tiny-2']) {
    const tiny = { version: 0, members: [member(id)] };
    for (const k of KINDS) ownerOf(k, 0, tiny);
  }
  const members = Array.from({ length: n }, (_, i) =>
    member(`member-${String(i).padStart(5, '0')}`),
  );
  const topology = { version: 1, members };
  const before = heapBytes();
  for (const k of KINDS) ownerOf(k, 0, topology);
  const after = heapBytes();
  if (topology.members.length === 0) process.stdout.write(''); // keeps `topology` alive
  return after - before;
}

function cases(n: number): BenchCase[] {
  const join = scenario(() => change(n, 'join'));
  const leave = scenario(() => change(n, 'leave'));
  return [
    { id: `${n} members, one join: longest turn`, metric: 'ms', run: join((f) => f.maxTurnMs) },
    { id: `${n} members, one join: CPU`, metric: 'ms', run: join((f) => f.cpuMs) },
    { id: `${n} members, one leave: longest turn`, metric: 'ms', run: leave((f) => f.maxTurnMs) },
    { id: `${n} members, one leave: CPU`, metric: 'ms', run: leave((f) => f.cpuMs) },
    {
      id: `${n} members: placement memory (4 kinds)`,
      metric: 'MB',
      run: async () => placementBytes(n) / 1e6,
    },
  ];
}

export const benchmark = defineBenchmark({
  name: 'placement-scale',
  description:
    'One membership change seen by a real member (Cluster, 4 kinds, default shards) among 1,000 ' +
    'and 10,000 synthetic members: the longest event-loop turn and the CPU of the whole reaction ' +
    '(placement, the pass over its ranges, claims or releases, events), and the memory one ' +
    "topology's placement keeps",
  repeats: 5,
  warmup: 1,
  cases: [...cases(1000), ...cases(10_000)],
});

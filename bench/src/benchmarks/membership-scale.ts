import { startEtcd } from '@granary/testkit';
import { defineBenchmark, type BenchCase } from '../harness';
import { delta, etcdCounters } from '../membership/etcd-metrics';
import { ScaleCluster, type ScaleShape } from '../membership/scale-cluster';
import { scenario } from '../membership/scenario';

/** Quiet time in which etcd requests per member at rest are counted. */
const REST_MS = 5000;
const FOUR = ['A', 'B', 'C', 'D'];
let runs = 0;

/** What one storm scenario measures. */
interface StormFigures {
  settleMs: number;
  grantsPerMember: number;
  stormWrites: number;
  orphans: number;
  restMsgsPerSecPerMember: number;
  joinWrites: number;
  joinEvents: number;
  joinEventsPerMember: number;
  joinSettleMs: number;
  /** Longest turn of the members already there (the reaction to a join). */
  joinMaxTurnMs: number;
  /** Longest turn of the joining process (its start-up included). */
  joinerMaxTurnMs: number;
}

/**
 * A cold join storm of the shape on a fresh etcd, then a rest window, then one join (a process
 * with one member) until settled again.
 */
async function storm(shape: ScaleShape): Promise<StormFigures> {
  const etcd = await startEtcd();
  const endpoint = etcd.endpoints[0]!;
  const sc = new ScaleCluster(etcd.endpoints, `scale${runs++}`, shape);
  try {
    const c0 = await etcdCounters(endpoint);
    const t0 = Date.now();
    await sc.storm();
    const settleMs = await sc.settled(t0);
    const members = shape.processes * shape.perProcess;
    const c1 = await etcdCounters(endpoint);
    const storm = delta(c0, c1);
    let orphans = await sc.orphans();
    if (orphans > 0) {
      // The invariant allows one claim retry period (1 s) for a hand-off in flight.
      await new Promise((r) => setTimeout(r, 1000));
      orphans = await sc.orphans();
    }
    await new Promise((r) => setTimeout(r, REST_MS));
    const c2 = await etcdCounters(endpoint);
    sc.resetTurns();
    const t1 = Date.now();
    const joiner = await sc.addProcess(1);
    const joinSettleMs = await sc.settled(t1);
    const c3 = await etcdCounters(endpoint);
    const join = delta(c2, c3);
    const figures: StormFigures = {
      settleMs,
      grantsPerMember: storm.leaseGrants / members,
      stormWrites: storm.puts + storm.deletes,
      orphans,
      restMsgsPerSecPerMember: delta(c1, c2).grpcMessages / (REST_MS / 1000) / members,
      joinWrites: join.puts + join.deletes,
      joinEvents: join.events,
      joinEventsPerMember: join.events / (members + 1),
      joinSettleMs,
      joinMaxTurnMs: await sc.maxTurnMs(sc.procs.filter((p) => p !== joiner)),
      joinerMaxTurnMs: await sc.maxTurnMs([joiner]),
    };
    const etcdLoad = {
      slowApplies: storm.slowApplies,
      walFsyncMeanMs: (1000 * storm.walFsyncSeconds) / Math.max(1, storm.walFsyncs),
    };
    process.stderr.write(`  ${JSON.stringify({ shape: label(shape), ...figures, ...etcdLoad })}\n`);
    return figures;
  } finally {
    await sc.stop();
    await etcd.stop();
  }
}

function label(s: ScaleShape): string {
  return `${s.processes}x${s.perProcess}, ${s.kinds.length} kind${s.kinds.length > 1 ? 's' : ''}${
    s.shardCount ? `, ${s.shardCount} shards` : ''
  }`;
}

/** The cases of one storm shape (all read from the same runs). */
function stormCases(shape: ScaleShape, figures: Array<keyof StormFigures>): BenchCase[] {
  const from = scenario(() => storm(shape));
  const metric: Record<keyof StormFigures, string> = {
    settleMs: 'ms',
    grantsPerMember: 'grants_per_member',
    stormWrites: 'etcd_key_writes',
    orphans: 'orphan_claims',
    restMsgsPerSecPerMember: 'etcd_msgs_per_s_per_member',
    joinWrites: 'etcd_key_writes',
    joinEvents: 'watch_events',
    joinEventsPerMember: 'watch_events_per_member',
    joinSettleMs: 'ms',
    joinMaxTurnMs: 'ms',
    joinerMaxTurnMs: 'ms',
  };
  const name: Record<keyof StormFigures, string> = {
    settleMs: 'cold storm settle',
    grantsPerMember: 'lease grants per member in the storm',
    stormWrites: 'cold storm: etcd key writes',
    orphans: 'claim audit: orphan claims',
    restMsgsPerSecPerMember: 'etcd messages per member per s at rest',
    joinWrites: 'one join: etcd key writes',
    joinEvents: 'one join: watch events delivered',
    joinEventsPerMember: 'one join: watch events per member',
    joinSettleMs: 'one join: settle',
    joinMaxTurnMs: 'one join: longest event-loop turn of the members before',
    joinerMaxTurnMs: 'one join: longest event-loop turn of the joiner (its start included)',
  };
  return figures.map((f) => ({
    id: `${label(shape)}: ${name[f]}`,
    metric: metric[f],
    run: from((t) => t[f]),
  }));
}

const ALL: Array<keyof StormFigures> = [
  'settleMs',
  'grantsPerMember',
  'stormWrites',
  'orphans',
  'restMsgsPerSecPerMember',
  'joinWrites',
  'joinEvents',
  'joinEventsPerMember',
  'joinSettleMs',
  'joinMaxTurnMs',
  'joinerMaxTurnMs',
];

export const benchmark = defineBenchmark({
  name: 'membership-scale',
  description:
    'Member processes on one real etcd (testkit), through the public API: cold join storms ' +
    '(settle time until every member holds exactly its desired ranges, lease grants, the claim ' +
    'audit), etcd messages per member at rest, and one join (etcd key writes and watch events ' +
    "from etcd's /metrics, settle time, the longest event-loop turn of the members already there " +
    'and of the joining process)',
  repeats: 3,
  warmup: 0,
  cases: [
    ...stormCases({ processes: 8, perProcess: 1, kinds: FOUR }, ALL),
    ...stormCases({ processes: 16, perProcess: 1, kinds: FOUR }, ALL),
    ...stormCases({ processes: 32, perProcess: 1, kinds: ['A'] }, ALL),
    ...stormCases({ processes: 4, perProcess: 8, kinds: FOUR }, ALL),
    ...stormCases({ processes: 4, perProcess: 8, kinds: FOUR, shardCount: 32_768 }, [
      'joinWrites',
      'joinEvents',
    ]),
    ...stormCases({ processes: 8, perProcess: 16, kinds: FOUR }, ALL),
  ],
});

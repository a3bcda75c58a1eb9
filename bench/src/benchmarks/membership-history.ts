import { startEtcd } from '@granary/testkit';
import { defineBenchmark, type BenchCase } from '../harness';
import { etcdCounters } from '../membership/etcd-metrics';
import { ScaleCluster } from '../membership/scale-cluster';
import { scenario } from '../membership/scenario';

/** Joins and leaves per run (the "50 joins and leaves"). */
const CYCLES = 50;
/** Short compaction interval for the run (the default is 5 min; the run lasts minutes). */
const RETENTION_MS = 10_000;
let runs = 0;

interface HistoryFigures {
  dbMB: number;
  dbInUseMB: number;
  revisions: number;
}

/**
 * 8 members (4 kinds) on a fresh etcd; then CYCLES times a ninth member joins and leaves
 * gracefully, each time until settled. etcd's database size at the end, with Granary's
 * compaction every RETENTION_MS or without it.
 */
async function history(retentionMs: number): Promise<HistoryFigures> {
  const etcd = await startEtcd();
  const sc = new ScaleCluster(etcd.endpoints, `history${runs++}`, {
    processes: 8,
    perProcess: 1,
    kinds: ['A', 'B', 'C', 'D'],
    historyRetentionMs: retentionMs,
  });
  try {
    const t0 = Date.now();
    await sc.storm();
    await sc.settled(t0);
    const start = await etcdCounters(etcd.endpoints[0]!);
    for (let i = 0; i < CYCLES; i++) {
      if (i > 0 && i % 10 === 0) {
        // Progress, so a run cut short still says how the db grows per join and leave.
        const c = await etcdCounters(etcd.endpoints[0]!);
        const perCycleKB = (c.dbSize - start.dbSize) / i / 1e3;
        process.stderr.write(
          `  ${JSON.stringify({ retentionMs, cycles: i, dbMB: c.dbSize / 1e6, dbInUseMB: c.dbSizeInUse / 1e6, perCycleKB })}\n`,
        );
      }
      const t = Date.now();
      const p = await sc.addProcess(1);
      await sc.settled(t);
      const t2 = Date.now();
      await sc.leave(p);
      await sc.settled(t2);
    }
    // One more interval, so the last compaction covers the cycles.
    await new Promise((r) => setTimeout(r, retentionMs > 0 ? retentionMs * 2 : 0));
    const c = await etcdCounters(etcd.endpoints[0]!);
    const status = (await (
      await fetch(`${etcd.endpoints[0]}/v3/maintenance/status`, { method: 'POST', body: '{}' })
    ).json()) as { header: { revision: string } };
    const figures = {
      dbMB: c.dbSize / 1e6,
      dbInUseMB: c.dbSizeInUse / 1e6,
      revisions: Number(status.header.revision),
    };
    process.stderr.write(`  ${JSON.stringify({ retentionMs, ...figures })}\n`);
    return figures;
  } finally {
    await sc.stop();
    await etcd.stop();
  }
}

function cases(label: string, retentionMs: number): BenchCase[] {
  const from = scenario(() => history(retentionMs));
  return [
    { id: `${label}: etcd db size`, metric: 'MB', run: from((f) => f.dbMB) },
    { id: `${label}: etcd db size in use`, metric: 'MB', run: from((f) => f.dbInUseMB) },
    { id: `${label}: etcd revision`, metric: 'revisions', run: from((f) => f.revisions) },
  ];
}

export const benchmark = defineBenchmark({
  name: 'membership-history',
  description:
    `etcd history after ${CYCLES} joins and graceful leaves of a 9th member among 8 (4 kinds, ` +
    'default shards): db size with Granary compacting every 10 s, and without compaction',
  repeats: 1,
  warmup: 0,
  cases: [...cases('compaction every 10 s', RETENTION_MS), ...cases('no compaction', 0)],
});

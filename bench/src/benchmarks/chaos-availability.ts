import { join } from 'node:path';
import { defineBenchmark, type BenchCase } from '../harness';

/** The chaos scenario of the cluster tests (compiled with them; bench does not build tests). */
const CHAOS_RUN = join(__dirname, '../../../packages/cluster/dist/test/chaos/chaos-run.js');

/** What this benchmark reads of a chaos run (see packages/cluster/test/chaos/chaos-run.ts). */
interface ChaosRunLike {
  report: {
    calls: number;
    ok: number;
    minAvailability: number;
    overlaps: string[];
    lostAcknowledged: number;
    appliedTwice: number;
    fencedWritesAccepted: number;
    late: number;
    recovery: Array<{
      fault: string;
      recoveryMs: number;
      minAvailability: number;
      slowestMs: number;
      fenced: string[];
    }>;
  };
}

interface ChaosModule {
  CHAOS_DEFAULTS: Record<string, unknown>;
  runChaos(options: Record<string, unknown>): Promise<ChaosRunLike>;
}

/** Faults of the schedule, in order, with a short id each. */
const FAULT_IDS = [
  'sigkill',
  'sigstop',
  'sigterm',
  'redis-restart',
  'etcd-leader-kill',
  'etcd-follower-kill',
  'cpu-burst',
  'partition',
];

let run: ChaosRunLike | undefined;

/** Runs the scenario once (the first case); every case reads its figure from that run. */
async function chaos(): Promise<ChaosRunLike> {
  if (run === undefined) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a compiled test module
    const m = require(CHAOS_RUN) as ChaosModule;
    run = await m.runChaos({
      ...m.CHAOS_DEFAULTS,
      log: (line: string) => process.stderr.write(`${line}\n`),
    });
  }
  return run;
}

const figure = (id: string, metric: string, read: (r: ChaosRunLike) => number): BenchCase => ({
  id,
  metric,
  run: async () => read(await chaos()),
});

export const benchmark = defineBenchmark({
  name: 'chaos-availability',
  description:
    'the chaos test once (4 nodes, 3-member etcd, Redis, 100 callers, 8 scheduled faults): calls, ok, safety violations, minimum availability per 1 s window, and per fault the time to recover and its lowest availability',
  repeats: 1,
  warmup: 0,
  cases: [
    figure('calls', 'calls', (r) => r.report.calls),
    figure('ok', 'calls', (r) => r.report.ok),
    figure(
      'safety-violations',
      'count',
      (r) =>
        r.report.overlaps.length +
        r.report.lostAcknowledged +
        r.report.appliedTwice +
        r.report.fencedWritesAccepted +
        r.report.late,
    ),
    figure('min-availability', 'ratio', (r) => r.report.minAvailability),
    ...FAULT_IDS.flatMap((id, i) => [
      figure(`${id}-recovery`, 'ms', (r) => r.report.recovery[i]?.recoveryMs ?? NaN),
      figure(
        `${id}-min-availability`,
        'ratio',
        (r) => r.report.recovery[i]?.minAvailability ?? NaN,
      ),
      figure(`${id}-members-fenced`, 'count', (r) => r.report.recovery[i]?.fenced.length ?? NaN),
    ]),
  ],
});

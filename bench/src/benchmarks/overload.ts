import { join } from 'node:path';
import { defineBenchmark, type BenchCase } from '../harness';

/** The overload scenario of the cluster tests (compiled with them; bench does not build tests). */
const OVERLOAD_RUN = join(
  __dirname,
  '../../../packages/cluster/dist/test/overload/overload-run.js',
);

interface Memory {
  rss: number;
  heapUsed: number;
}

/** What this benchmark reads of a run (see packages/cluster/test/overload/overload-run.ts). */
interface PhaseLike {
  multiple: number;
  offered: number;
  goodput: number;
  p99: number;
  /** Calls the generators shed before making them (Cluster.canCall false; caller-bound). */
  shedBeforeStart?: number;
  errors: Record<string, number>;
  counters: Record<string, number>;
  nodes: Memory[];
  generators: Memory[];
}

interface ReportLike {
  capacity: number;
  idle: { nodes: Memory[]; generators: Memory[] };
  phases: PhaseLike[];
  recovery:
    { recoveredAfterMs: number; goodputRecoveredAfterMs: number; baselineP99: number } | undefined;
}

type Scenario = 'node-bound' | 'caller-bound';

interface OverloadModule {
  OVERLOAD_DEFAULTS: Record<Scenario, Record<string, unknown>>;
  runOverload(options: Record<string, unknown>): Promise<ReportLike>;
}

const runs = new Map<Scenario, Promise<ReportLike>>();

/** Runs a scenario once (its first case); every case reads its figure from that run. */
function run(scenario: Scenario): Promise<ReportLike> {
  let r = runs.get(scenario);
  if (r === undefined) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a compiled test module
    const m = require(OVERLOAD_RUN) as OverloadModule;
    r = m.runOverload({
      ...m.OVERLOAD_DEFAULTS[scenario],
      log: (line: string) => process.stderr.write(`${line}\n`),
    });
    runs.set(scenario, r);
  }
  return r;
}

const MiB = 1024 * 1024;

const figure = (
  scenario: Scenario,
  id: string,
  metric: string,
  read: (r: ReportLike) => number,
  baseline?: string,
): BenchCase => ({
  id: `${scenario}-${id}`,
  metric,
  run: async () => read(await run(scenario)),
  ...(baseline !== undefined ? { baseline: `${scenario}-${baseline}` } : {}),
});

const phase = (r: ReportLike, multiple: number): PhaseLike =>
  r.phases.find((p) => p.multiple === multiple)!;

const count = (p: PhaseLike, key: string): number =>
  Object.entries(p.counters)
    .filter(([k]) => k.startsWith(key))
    .reduce((n, [, v]) => n + v, 0);

/** Per offered multiple: goodput (vs just under capacity), p99, refusals, drops, retries. */
function phaseCases(scenario: Scenario, multiples: number[]): BenchCase[] {
  return multiples.flatMap((m) => [
    figure(scenario, `goodput-x${m}`, 'calls_per_s', (r) => phase(r, m).goodput, 'goodput-x0.9'),
    figure(scenario, `p99-x${m}`, 'p99_ms', (r) => phase(r, m).p99),
    figure(scenario, `overloaded-x${m}`, 'calls', (r) => phase(r, m).errors.ERR_OVERLOADED ?? 0),
    figure(
      scenario,
      `deadline-exceeded-x${m}`,
      'calls',
      (r) => phase(r, m).errors.ERR_DEADLINE_EXCEEDED ?? 0,
    ),
    figure(scenario, `drops-x${m}`, 'calls', (r) => count(phase(r, m), 'drops.')),
    figure(scenario, `shed-at-source-x${m}`, 'calls', (r) => phase(r, m).shedBeforeStart ?? 0),
    figure(scenario, `retries-x${m}`, 'calls', (r) => count(phase(r, m), 'retries.spent')),
  ]);
}

/** Peak memory over the phases minus idle, per kind of process, MiB. */
function growth(r: ReportLike, who: 'nodes' | 'generators', field: keyof Memory): number {
  let max = 0;
  for (const p of r.phases) {
    p[who].forEach((m, i) => (max = Math.max(max, m[field] - r.idle[who][i]![field])));
  }
  return max / MiB;
}

const MULTIPLES = [0.5, 0.9, 1, 1.5, 2, 4];

export const benchmark = defineBenchmark({
  name: 'overload',
  description:
    'open-loop load at 0.5-4x measured capacity, 1 s deadlines: node-bound (1 node, 50 µs turns, ' +
    '2 load-generator processes) and caller-bound (1 calling process, 2 nodes, a cheap grain); ' +
    'goodput, p99 of successes, refusals, drops, retries, memory growth, recovery after overload',
  repeats: 1,
  warmup: 0,
  cases: (['node-bound', 'caller-bound'] as const).flatMap((s) => [
    figure(s, 'capacity', 'calls_per_s', (r) => r.capacity),
    ...phaseCases(s, MULTIPLES),
    figure(s, 'node-rss-growth', 'MiB', (r) => growth(r, 'nodes', 'rss')),
    figure(s, 'caller-heap-growth', 'MiB', (r) => growth(r, 'generators', 'heapUsed')),
    figure(s, 'recovery', 'ms', (r) => r.recovery?.recoveredAfterMs ?? NaN),
    figure(s, 'recovery-goodput', 'ms', (r) => r.recovery?.goodputRecoveredAfterMs ?? NaN),
  ]),
});

/** One measured quantity of a benchmark, e.g. "granary tell, msgs_per_s". */
export interface BenchCase {
  /** Stable id, used as the `case` field and as another case's `baseline`. */
  id: string;
  /** Unit, e.g. `msgs_per_s`, `req_per_s`, `bytes_per_actor`, `p99_ms`. */
  metric: string;
  /** Id of the case this one is compared with (ratio = this median / baseline median). */
  baseline?: string;
  /**
   * A peer framework measured for comparison. A peer that throws (nact's query has been seen
   * to time out on a loaded machine) is reported with `error` and the benchmark goes on:
   * a peer's failure must not cost the run our own figures.
   * @default false
   */
  peer?: boolean;
  /** One repetition; resolves with the metric's value. */
  run(): Promise<number>;
}

/** A benchmark file exports `benchmark: Benchmark`; it runs in a fresh process. */
export interface Benchmark {
  name: string;
  description: string;
  /**
   * Measured repetitions per case.
   * @default 5
   */
  repeats?: number;
  /**
   * Unmeasured repetitions first, so the JIT has settled. `BENCH_WARMUP=N` overrides it for
   * every benchmark of a run (an A/B comparison gives both trees the same warm-up).
   * @default 1
   */
  warmup?: number;
  setup?(): Promise<void>;
  teardown?(): Promise<void>;
  cases: BenchCase[];
}

/** One row of bench/results/<name>.json; this shape is the contract every benchmark keeps. */
export interface CaseResult {
  case: string;
  metric: string;
  median: number;
  min: number;
  max: number;
  baseline: string | null;
  ratio: number | null;
  /** Present only when a peer case failed; median, min and max are then NaN (null in JSON). */
  error?: string;
}

/** The whole of bench/results/<name>.json. */
export interface BenchResult {
  bench: string;
  node: string;
  cases: CaseResult[];
}

/** Typed identity helper so benchmark files get checking and completion. */
export function defineBenchmark(benchmark: Benchmark): Benchmark {
  return benchmark;
}

/** Median of a non-empty list. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The p-th percentile (0..100) of a list, nearest-rank. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** Full GC when the process runs with --expose-gc (the runner always passes it). */
export function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/**
 * Warm-up runs for a benchmark whose case is one long loop in a function called once per run
 * (core-tell, core-request, pool-local). V8 runs such a loop in on-stack-replacement code until it
 * installs the function's optimized code, which it did in the 4th to 6th run at 42f2642 and at
 * d5e0e30 alike; with 1 warm-up the median fell in that ramp, moved up to 25% between runs of one
 * tree and measured V8's tiering of the loop rather than the send path (docs/performance-notes.md).
 */
export const LOOP_WARMUP = 6;

/** BENCH_WARMUP, when set to an integer >= 0. */
function warmupOverride(): number | undefined {
  const raw = process.env.BENCH_WARMUP;
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`BENCH_WARMUP must be an integer >= 0, got ${raw}`);
  return n;
}

/** Runs every case (warm-up, then repeats) and computes median, min, max and ratios. */
export async function measure(benchmark: Benchmark): Promise<BenchResult> {
  const repeats = Number(process.env.BENCH_REPEATS) || benchmark.repeats || 5;
  const warmup = warmupOverride() ?? benchmark.warmup ?? 1;
  await benchmark.setup?.();
  const samples = new Map<string, number[]>();
  const errors = new Map<string, string>();
  const runCase = async (c: BenchCase): Promise<number[]> => {
    for (let i = 0; i < warmup; i++) await c.run();
    const values: number[] = [];
    for (let i = 0; i < repeats; i++) {
      collectGarbage();
      values.push(await c.run());
    }
    return values;
  };
  // BENCH_NO_PEERS=1 measures only our own cases (an old-vs-new comparison needs no peers).
  // BENCH_CASES=a,b runs only those cases (an A/B run of one case fits in a short quiet slot);
  // BENCH_CASES=/<regex>/ the cases whose id matches (ids that hold commas; a long benchmark
  // split into several short runs).
  const spec = process.env.BENCH_CASES ?? '';
  const pattern = /^\/(.+)\/$/.exec(spec)?.[1];
  const match = pattern === undefined ? undefined : new RegExp(pattern);
  const only = spec.split(',').filter((id) => id !== '');
  const cases = benchmark.cases.filter(
    (c) =>
      !(process.env.BENCH_NO_PEERS && c.peer) &&
      (match ? match.test(c.id) : !only.length || only.includes(c.id)),
  );
  try {
    for (const c of cases) {
      try {
        samples.set(c.id, await runCase(c));
      } catch (err) {
        if (!c.peer) throw err;
        errors.set(c.id, err instanceof Error ? err.message : String(err));
        samples.set(c.id, [NaN]);
      }
    }
  } finally {
    await benchmark.teardown?.();
  }
  const medians = new Map([...samples].map(([id, v]) => [id, median(v)]));
  return {
    bench: benchmark.name,
    node: process.version,
    cases: cases.map((c) => {
      const values = samples.get(c.id)!;
      const base = c.baseline ? medians.get(c.baseline) : undefined;
      const m = medians.get(c.id)!;
      const error = errors.get(c.id);
      return {
        case: c.id,
        metric: c.metric,
        median: m,
        min: Math.min(...values),
        max: Math.max(...values),
        baseline: c.baseline ?? null,
        ratio: base ? m / base : null,
        ...(error !== undefined ? { error } : {}),
      };
    }),
  };
}

function fmt(n: number): string {
  if (Math.abs(n) >= 1000) return Math.round(n).toLocaleString('en-US');
  return Number(n.toPrecision(3)).toString();
}

/** The table printed after a benchmark: case, metric, median, min–max, ratio vs baseline. */
export function formatTable(result: BenchResult): string {
  const rows = [['case', 'metric', 'median', 'min–max', 'ratio', 'baseline']];
  for (const c of result.cases) {
    rows.push([
      c.case,
      c.metric,
      fmt(c.median),
      `${fmt(c.min)}–${fmt(c.max)}`,
      c.error !== undefined ? `failed: ${c.error}` : c.ratio === null ? '' : c.ratio.toFixed(2),
      c.baseline ?? '',
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]): string => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ');
  return [`## ${result.bench} (node ${result.node})`, ...rows.map(line)].join('\n');
}

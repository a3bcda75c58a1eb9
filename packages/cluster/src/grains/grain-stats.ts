/** Latency buckets: bucket i holds turns of at most LATENCY_BOUNDS_MS[i] (the last: more). */
export const LATENCY_BOUNDS_MS: readonly number[] = Object.freeze(
  // 0.01 ms … ~84 s in steps of √2: percentiles within ±20%, 48 counters per kind.
  Array.from({ length: 47 }, (_, i) => 0.01 * Math.SQRT2 ** i),
);

/** A grain's served-turn totals, as {@link GrainStatsSnapshot.top} lists them. */
export interface HotGrain {
  identity: string;
  /** Turns counted for it (an over-estimate by at most `error` once it was evicted and back). */
  calls: number;
  /** Milliseconds its turns ran (awaiting turns: until their promise settled). */
  busyMs: number;
  /** How far `calls` may over-count (0 for grains tracked since their first turn). */
  error: number;
}

/** Totals of one kind's served turns since statistics were enabled. */
export interface GrainStatsSnapshot {
  kind: string;
  /** Activations started and ended since statistics were enabled. */
  activated: number;
  deactivated: number;
  /** Turns run (every user message that reached the grain's code). */
  turns: number;
  /** Of those, how many ended in an error reply (the grain threw or rejected). */
  failed: number;
  busyMs: number;
  /** Error name → count (the thrown error's name). */
  errors: Record<string, number>;
  /** Turn counts per bucket of LATENCY_BOUNDS_MS (cumulative totals: diff two for a window). */
  latency: number[];
  /** The busiest grains by calls, most first (at most the tracker's capacity). */
  top: HotGrain[];
}

interface Counter {
  calls: number;
  busyMs: number;
  error: number;
}

/**
 * Served-turn statistics of one hosted kind: totals, errors by name, a latency histogram and
 * the hot grains. Kept only while something asks for them (the admin API enables them): a kind
 * without them pays one property read per turn.
 *
 * The hot grains are a Space-Saving summary (Metwally et al. 2005) pruned in batches: up to
 * 4 × capacity counters; when full, the `capacity` largest stay and a new grain starts from the
 * smallest count evicted (its possible over-count, kept in `error`). A grain with more than
 * 1/capacity of the turns since enabling is always listed.
 */
export class KindStats {
  /** Activations started and ended since enabled (the activator counts them). */
  activated = 0;
  deactivated = 0;
  turns = 0;
  failed = 0;
  busyMs = 0;
  private readonly errors = new Map<string, number>();
  private readonly latency = new Float64Array(LATENCY_BOUNDS_MS.length + 1);
  private readonly hot = new Map<string, Counter>();
  /** The largest count evicted so far: a new counter's possible under-count. */
  private floor = 0;

  constructor(
    readonly kind: string,
    private readonly capacity = 100,
  ) {}

  /** One turn of `identity` ran `ms`; `error`: the name of what it threw, if it did. */
  turn(identity: string, ms: number, error: string | undefined): void {
    this.turns++;
    this.busyMs += ms;
    if (error !== undefined) {
      this.failed++;
      this.errors.set(error, (this.errors.get(error) ?? 0) + 1);
    }
    this.latency[bucketOf(ms)]!++;
    const c = this.hot.get(identity);
    if (c !== undefined) {
      c.calls++;
      c.busyMs += ms;
      return;
    }
    if (this.hot.size >= this.capacity * 4) this.prune();
    this.hot.set(identity, { calls: this.floor + 1, busyMs: ms, error: this.floor });
  }

  /** A copy of the totals and the `n` hottest grains (by calls, or by busy time). */
  snapshot(n = 10, by: 'calls' | 'time' = 'calls'): GrainStatsSnapshot {
    const top = [...this.hot]
      .map(([identity, c]) => ({
        identity,
        calls: c.calls,
        busyMs: round(c.busyMs),
        error: c.error,
      }))
      .sort(by === 'calls' ? (a, b) => b.calls - a.calls : (a, b) => b.busyMs - a.busyMs)
      .slice(0, Math.max(0, n));
    return {
      kind: this.kind,
      activated: this.activated,
      deactivated: this.deactivated,
      turns: this.turns,
      failed: this.failed,
      busyMs: round(this.busyMs),
      errors: Object.fromEntries(this.errors),
      latency: Array.from(this.latency),
      top,
    };
  }

  /** Keeps the `capacity` largest counters. */
  private prune(): void {
    const sorted = [...this.hot].sort((a, b) => b[1].calls - a[1].calls);
    for (let i = this.capacity; i < sorted.length; i++) {
      const [identity, c] = sorted[i]!;
      if (c.calls > this.floor) this.floor = c.calls;
      this.hot.delete(identity);
    }
  }
}

/** The latency bucket of a turn of `ms`. */
export function bucketOf(ms: number): number {
  if (!(ms > LATENCY_BOUNDS_MS[0]!)) return 0;
  const i = Math.ceil(Math.log(ms / LATENCY_BOUNDS_MS[0]!) / Math.log(Math.SQRT2));
  return Math.min(i, LATENCY_BOUNDS_MS.length);
}

/**
 * The `q` quantile (0..1) of a latency histogram, as the upper bound of its bucket in ms
 * (Infinity for the overflow bucket); undefined when it is empty.
 */
export function quantileOf(counts: ArrayLike<number>, q: number): number | undefined {
  let total = 0;
  for (let i = 0; i < counts.length; i++) total += counts[i]!;
  if (total === 0) return undefined;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    seen += counts[i]!;
    if (seen >= rank) return LATENCY_BOUNDS_MS[i] ?? Infinity;
  }
  return Infinity;
}

/** The name a turn's error is counted under. */
export function errorNameOf(err: unknown): string {
  if (err instanceof Error) return err.name;
  return err === null ? 'null' : typeof err;
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

import type { Histogram } from '@opentelemetry/api';

/** Counters of a member's reminders since start (`cluster.reminderStats()`). */
export interface ReminderStats {
  /** Reminders and jobs this member has loaded now (for the shards it owns). */
  readonly loaded: number;
  /** Ticks and job attempts claimed and sent to their grain. */
  readonly fired: number;
  /** Fires whose grain turn ended without throwing. */
  readonly delivered: number;
  /** Fires the grain's turn threw on (a reminder's tick is not retried; a job's attempt is). */
  readonly grainErrors: number;
  /** Fires that did not reach the grain or whose outcome is unknown (deadline, owner died). */
  readonly undelivered: number;
  /** Ticks missed and not fired under `catchUp: 'skip' | 'once'`. */
  readonly skipped: number;
  /** Claims refused because the tick was claimed already (a second fire prevented). */
  readonly taken: number;
  /** Claims and loads refused by the shard's epoch fence (a newer owner exists). */
  readonly fenced: number;
  /** Store calls that failed (Redis down or silent); retried. */
  readonly storeErrors: number;
  /** Job attempts after the first. */
  readonly jobRetries: number;
  readonly jobsDone: number;
  readonly jobsFailed: number;
  /** Lateness of fires (firedAt - dueAt, ms) since start. */
  readonly tardiness: { count: number; p50: number; p99: number; max: number };
}

/** Histogram resolution: 1 ms buckets up to this, one overflow bucket past it. */
const TARDINESS_BUCKETS = 10_000;

/** The mutable counters behind ReminderStats. */
export class ReminderCounters {
  /** The tardiness instrument (seconds) when the member records metrics. */
  histogram: Histogram | undefined = undefined;
  fired = 0;
  delivered = 0;
  grainErrors = 0;
  undelivered = 0;
  skipped = 0;
  taken = 0;
  fenced = 0;
  storeErrors = 0;
  jobRetries = 0;
  jobsDone = 0;
  jobsFailed = 0;
  private readonly late = new Uint32Array(TARDINESS_BUCKETS + 1);
  private lateCount = 0;
  private lateMax = 0;

  /** One fire `ms` late. */
  tardy(ms: number): void {
    const b = Math.max(0, Math.min(TARDINESS_BUCKETS, Math.round(ms)));
    this.late[b]!++;
    this.lateCount++;
    if (ms > this.lateMax) this.lateMax = ms;
    this.histogram?.record(ms / 1000);
  }

  snapshot(loaded: number): ReminderStats {
    return {
      loaded,
      fired: this.fired,
      delivered: this.delivered,
      grainErrors: this.grainErrors,
      undelivered: this.undelivered,
      skipped: this.skipped,
      taken: this.taken,
      fenced: this.fenced,
      storeErrors: this.storeErrors,
      jobRetries: this.jobRetries,
      jobsDone: this.jobsDone,
      jobsFailed: this.jobsFailed,
      tardiness: {
        count: this.lateCount,
        p50: this.quantile(0.5),
        p99: this.quantile(0.99),
        max: Math.round(this.lateMax),
      },
    };
  }

  private quantile(q: number): number {
    if (this.lateCount === 0) return 0;
    const rank = Math.ceil(q * this.lateCount);
    let seen = 0;
    for (let b = 0; b <= TARDINESS_BUCKETS; b++) {
      seen += this.late[b]!;
      if (seen >= rank) return b;
    }
    return TARDINESS_BUCKETS;
  }
}

import { InvalidOptionError } from '@granary/core';

/** Load shedding on a member that hosts grains (see LoadShedder). */
export interface LoadSheddingOptions {
  /**
   * Shed at all. Off, only the hard bounds (maxPendingCalls, mailbox capacity) refuse calls.
   * @default true
   */
  enabled?: boolean;
  /**
   * The least run-queue delay the member tolerates: how long a grain that has a message waits
   * for the event loop. The delay tolerated is the larger of this and `deadlineShare` of the
   * time left to the calls it admits. Above it for `intervalMs`, the member sheds; while it
   * sheds, it accepts new calls only while its queued calls are fewer than it completes in the
   * delay tolerated.
   * @default 50
   */
  targetMs?: number;
  /**
   * The share of a call's remaining deadline that it may spend waiting in the run queue: the
   * member tolerates `deadlineShare x` the least time left to a call it admitted lately (and at
   * least `targetMs`), so a queue served well within the calls' deadlines is not shed. 0: a
   * fixed `targetMs`.
   * @default 0.05
   */
  deadlineShare?: number;
  /**
   * How long the delay must stay above `targetMs` before shedding starts (a burst that drains
   * within it is absorbed), and how long without excess load before it stops.
   * @default 100
   */
  intervalMs?: number;
}

/** The retry budget of a member's grain calls (after Finagle's RetryBudget). */
export interface RetryBudgetOptions {
  /**
   * Retries after OverloadedError (and re-sends counted against a call's `retries`) may be at
   * most this share of the calls started in the window.
   * @default 0.1
   */
  ratio?: number;
  /**
   * Retries allowed per second of the window on top of the ratio, so a member making few calls
   * can still retry.
   * @default 10
   */
  minPerSecond?: number;
  /**
   * The sliding window, ms (ten buckets).
   * @default 10000
   */
  windowMs?: number;
}

/** Bounds, shedding and retry budget of a member's grain calls (`Cluster.start({ overload })`). */
export interface OverloadOptions {
  /**
   * Grain calls this member may have in flight at once (its own and its grains', sends until
   * acknowledged). A call beyond fails at once with OverloadedError (`maxOutstandingCalls`):
   * memory stays bounded however far the offered load exceeds what the cluster answers (about
   * `maxOutstandingCalls x` the size of a call and its reply).
   * @default 10000
   */
  maxOutstandingCalls?: number;
  /**
   * Calls this member may hold accepted and not finished, over all the grains it hosts (queued in
   * their mailboxes or running). A call beyond is refused with OverloadedError
   * (`maxPendingCalls`) before it costs anything but its decoding.
   * @default 20000
   */
  maxPendingCalls?: number;
  /** @default { enabled: true, targetMs: 50, deadlineShare: 0.05, intervalMs: 100 } */
  loadShedding?: LoadSheddingOptions;
  /** @default { ratio: 0.1, minPerSecond: 10, windowMs: 10000 } */
  retryBudget?: RetryBudgetOptions;
}

/** OverloadOptions with every field set. */
export interface ResolvedOverloadOptions {
  readonly maxOutstandingCalls: number;
  readonly maxPendingCalls: number;
  readonly loadShedding: Readonly<Required<LoadSheddingOptions>>;
  readonly retryBudget: Readonly<Required<RetryBudgetOptions>>;
}

/** Defaults of OverloadOptions. */
export const DEFAULT_OVERLOAD_OPTIONS: ResolvedOverloadOptions = {
  // 10,000 calls in flight is 125 ms of work for a member that completes 80k calls/s (Little's
  // law), and ~20 MB of calls: a bound on memory that does not limit a healthy caller.
  maxOutstandingCalls: 10_000,
  // ~5 MB of queued calls; with 50 µs turns, 1 s of work.
  maxPendingCalls: 20_000,
  // 50 ms of run-queue delay is 1% of the default call deadline (5 s); 100 ms is CoDel's interval.
  // A twentieth of the time left: 250 ms for calls with the default deadline, and targetMs for
  // deadlines of 1 s or less. A tenth was measured too: with 1 s deadlines it held queues of
  // 100 ms at 0.9x capacity (p99 70-100 ms, 15-19 ms at 50 ms) and p99 near the deadline at 4x.
  loadShedding: { enabled: true, targetMs: 50, deadlineShare: 0.05, intervalMs: 100 },
  // Finagle's RetryBudget defaults (20%, 10/s, 10 s), at half the ratio: issue 26 asks <= 10%.
  retryBudget: { ratio: 0.1, minPerSecond: 10, windowMs: 10_000 },
};

function positive(name: string, value: number, integer = false): void {
  if (!(value > 0) || (integer && !Number.isInteger(value))) {
    throw new InvalidOptionError(
      `overload.${name}`,
      `must be ${integer ? 'an integer ' : 'a number '}> 0, got ${value}`,
    );
  }
}

/** Merges `options` over the defaults and checks every field. @throws InvalidOptionError */
export function resolveOverloadOptions(
  options: OverloadOptions | undefined,
): ResolvedOverloadOptions {
  const d = DEFAULT_OVERLOAD_OPTIONS;
  const o: ResolvedOverloadOptions = {
    maxOutstandingCalls: options?.maxOutstandingCalls ?? d.maxOutstandingCalls,
    maxPendingCalls: options?.maxPendingCalls ?? d.maxPendingCalls,
    loadShedding: { ...d.loadShedding, ...options?.loadShedding },
    retryBudget: { ...d.retryBudget, ...options?.retryBudget },
  };
  positive('maxOutstandingCalls', o.maxOutstandingCalls, true);
  positive('maxPendingCalls', o.maxPendingCalls, true);
  positive('loadShedding.targetMs', o.loadShedding.targetMs);
  positive('loadShedding.intervalMs', o.loadShedding.intervalMs);
  positive('retryBudget.windowMs', o.retryBudget.windowMs);
  const share = o.loadShedding.deadlineShare;
  if (!(share >= 0 && share < 1)) {
    throw new InvalidOptionError(
      'overload.loadShedding.deadlineShare',
      `must be >= 0 and < 1, got ${share}`,
    );
  }
  if (!(o.retryBudget.ratio >= 0)) {
    throw new InvalidOptionError(
      'overload.retryBudget.ratio',
      `must be >= 0, got ${o.retryBudget.ratio}`,
    );
  }
  if (!(o.retryBudget.minPerSecond >= 0)) {
    throw new InvalidOptionError(
      'overload.retryBudget.minPerSecond',
      `must be >= 0, got ${o.retryBudget.minPerSecond}`,
    );
  }
  return o;
}

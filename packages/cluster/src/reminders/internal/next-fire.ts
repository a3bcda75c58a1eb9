import type { ReminderSpec } from '../reminder-store';

/** The next fire of a periodic reminder: its tick, when it was due, and ticks skipped before. */
export interface PlannedFire {
  readonly tick: number;
  readonly dueAt: number;
  readonly skipped: number;
}

/**
 * What a periodic reminder fires next at `now` (epoch ms), given the last tick claimed: a tick
 * due now (possibly late), or `undefined` with `waitUntil` set to when the next is due.
 *
 * Tick `n` is due at `spec.dueAt + (n - t0) * periodMs`. With `k` the latest tick due at `now`
 * and `next` the first unclaimed one, ticks `next .. k-1` are missed (the one after each was due
 * too) and `k` is current. The catch-up policy decides:
 *
 * ```
 *   all : next                     (then next+1 ... each fired in turn)
 *   once: k-1, skipped k-1-next    (one fire for the missed ones; then k)
 *   skip: k,   skipped k-next      (the missed ones never fire)
 * ```
 */
export function nextFire(
  spec: ReminderSpec,
  t0: number,
  last: number,
  now: number,
): PlannedFire | { waitUntil: number } {
  const p = spec.periodMs;
  const next = Math.max(last + 1, t0);
  const dueOf = (tick: number): number => spec.dueAt + (tick - t0) * p;
  const dueNext = dueOf(next);
  if (dueNext > now) return { waitUntil: dueNext };
  const k = Math.max(next, t0 + Math.floor((now - spec.dueAt) / p));
  if (k === next || spec.catchUp === 'all') return { tick: next, dueAt: dueNext, skipped: 0 };
  if (spec.catchUp === 'once') return { tick: k - 1, dueAt: dueOf(k - 1), skipped: k - 1 - next };
  return { tick: k, dueAt: dueOf(k), skipped: k - next };
}

/** Longest wait between two attempts of a job. */
const MAX_BACKOFF_MS = 60_000;

/** Delay before attempt `attempt + 1` of a job after `attempt` failed (from 1). */
export function jobBackoffMs(spec: ReminderSpec, attempt: number): number {
  return Math.min(MAX_BACKOFF_MS, spec.backoffMs * 2 ** Math.max(0, attempt - 1));
}

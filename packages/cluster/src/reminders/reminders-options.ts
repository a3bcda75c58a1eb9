import type { ReminderStore } from './reminder-store';

/** Options of a member's reminders and jobs (`ClusterOptions.reminders`). */
export interface RemindersOptions {
  /**
   * Where reminders are stored: a RedisReminderStore in production (every member of the
   * cluster must use the same store), a MemoryReminderStore shared by in-process members.
   */
  store: ReminderStore;
  /**
   * Deadline of the grain call that delivers one fire (retries to the grain's owner included).
   * A reminder's tick whose call fails is counted as undelivered, not fired again; a job's
   * attempt is retried with backoff.
   * @default 5000
   */
  deliveryTimeoutMs?: number;
  /**
   * Most fires claimed and not yet answered by their grain at once. A reminder due while the
   * member is at this bound waits (late, its catch-up policy applied when it goes) instead of
   * claiming a tick the member cannot deliver: a claimed tick is never fired again, and a call
   * refused by the member's load shedding would lose it. Overload turns into tardiness and
   * reported skips, not lost ticks.
   * @default 1000
   */
  maxFiresInFlight?: number;
}

/** Defaults of RemindersOptions. */
export const DEFAULT_REMINDERS_OPTIONS = {
  deliveryTimeoutMs: 5000,
  maxFiresInFlight: 1000,
} as const;

/** Shortest period of a periodic reminder (ms). */
export const MIN_PERIOD_MS = 100;
/** Attempts of a job before it is recorded as failed. */
export const DEFAULT_MAX_ATTEMPTS = 5;
/** Delay before a job's second attempt (ms), doubling after. */
export const DEFAULT_BACKOFF_MS = 1000;

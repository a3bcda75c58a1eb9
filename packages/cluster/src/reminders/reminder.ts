/**
 * What to do with the ticks of a periodic reminder that nobody fired in time: the shard had no
 * owner (a member died and its lease had not expired yet), the store was down, or the owner
 * was more than a period behind. A tick is **missed** when the next one is already due.
 *
 * - `'skip'`: missed ticks are not fired; the current tick fires, carrying how many were
 *   skipped (`ReminderFire.skipped`), and the schedule goes on.
 * - `'once'`: one fire for the missed ticks (the latest missed tick, carrying how many before
 *   it were skipped), then the current tick.
 * - `'all'`: every missed tick fires, in order, as fast as they are claimed; no tick that was
 *   never claimed is lost.
 *
 * Under every policy a tick is delivered at most once: a tick claimed by an owner that then
 * died, or whose call failed or threw, is not fired again, `'all'` included (the claim is what
 * makes a second owner's fire impossible). So a tick claimed in a dying owner's last
 * milliseconds, before its call reached the grain, is lost; it is counted as `undelivered` when
 * the owner lives to see the call fail. Work that must happen at least once is a job.
 */
export type CatchUp = 'skip' | 'once' | 'all';

/** The catch-up policies, for validation. */
export const CATCH_UP_POLICIES: readonly CatchUp[] = ['skip', 'once', 'all'];

/** Options of `reminders.set`: when, how often, and what happens to missed ticks. */
export interface ReminderOptions {
  /** Epoch ms of the first fire. Give this or `dueInMs`. */
  dueAt?: number;
  /** Ms from now to the first fire. Give this or `dueAt`. */
  dueInMs?: number;
  /**
   * Period in ms (at least 100). Without it the reminder is a one-off job: delivered at least
   * once at or after its time, retried with backoff while the grain's turn throws or the call
   * fails, up to `maxAttempts`, its outcome recorded.
   * @default undefined (a job)
   */
  periodMs?: number;
  /** Missed-tick policy of a periodic reminder (required for one: say it explicitly). */
  catchUp?: CatchUp;
  /**
   * Jobs: attempts before the job is recorded as failed.
   * @default 5
   */
  maxAttempts?: number;
  /**
   * Jobs: delay before the second attempt in ms; it doubles per attempt, up to 60 s.
   * @default 1000
   */
  backoffMs?: number;
  /**
   * JSON-serializable data delivered with every fire (kept small: it is stored with the
   * reminder and loaded by every owner of its shard).
   * @default undefined
   */
  data?: unknown;
}

/**
 * The message a grain receives for each fire of a reminder or attempt of a job (check with
 * `isReminderFire(ctx.message)`). A plain object, so it crosses the wire as JSON.
 */
export interface ReminderFire {
  /** The reminder's name. */
  readonly $reminder: string;
  /** Tick sequence number (from 0; a job's attempts use ticks too). Never delivered twice. */
  readonly tick: number;
  /** Epoch ms the tick was due. */
  readonly dueAt: number;
  /** Epoch ms the owner fired it (firedAt - dueAt is its tardiness). */
  readonly firedAt: number;
  /** Ticks skipped just before this one under `catchUp: 'skip' | 'once'` (0 otherwise). */
  readonly skipped: number;
  /** True for a one-off job. */
  readonly job: boolean;
  /** Jobs: the attempt, from 1. Reminders: 1. */
  readonly attempt: number;
  /** The reminder's `data`, if it had any. */
  readonly data?: unknown;
}

/** True when a grain's message is a reminder fire or a job attempt. */
export function isReminderFire(message: unknown): message is ReminderFire {
  return (
    message !== null &&
    typeof message === 'object' &&
    typeof (message as { $reminder?: unknown }).$reminder === 'string'
  );
}

/** A stored reminder as `list()` shows it. */
export interface ReminderInfo {
  readonly name: string;
  /** Epoch ms of the first tick of the current schedule. */
  readonly dueAt: number;
  /** 0 for a job. */
  readonly periodMs: number;
  readonly catchUp: CatchUp;
  /** The last tick claimed (-1: none yet). */
  readonly lastTick: number;
  readonly data?: unknown;
}

/** How a job ended (recorded in the store; `reminders.outcome(name)` reads it). */
export interface JobOutcome {
  readonly status: 'done' | 'failed';
  /** Attempts made. */
  readonly attempts: number;
  /** Epoch ms it ended. */
  readonly at: number;
  /** The last attempt's error message, when it failed. */
  readonly error?: string;
}

/**
 * The reminders of one grain: from inside it (`ctx.reminders`) or from anywhere
 * (`cluster.reminders(kind, id)`). Each call is stored before it resolves, and the shard's owner
 * schedules it at once.
 *
 * @example
 * await ctx.reminders.set('digest', { dueInMs: 1000, periodMs: 60_000, catchUp: 'once' });
 * await cluster.reminders('invoice', 'inv-7').set('send', { dueAt: Date.parse('2027-01-01') });
 */
export interface GrainReminders {
  /** Creates or replaces reminder `name` (a replaced one keeps counting ticks from its last). */
  set(name: string, options: ReminderOptions): Promise<void>;
  /** Deletes reminder `name`; false if there was none. */
  delete(name: string): Promise<boolean>;
  /** The grain's stored reminders and pending jobs. */
  list(): Promise<ReminderInfo[]>;
  /** How job `name` ended, if it has. */
  outcome(name: string): Promise<JobOutcome | undefined>;
}

import type { Logger } from '@granary/core';
import type { ReminderFencedError } from './errors';
import type { CatchUp, JobOutcome } from './reminder';

/** What is stored of a reminder's schedule (set by `reminders.set`, never by a fire). */
export interface ReminderSpec {
  /** Epoch ms of tick `t0`. */
  readonly dueAt: number;
  /** 0 for a job. */
  readonly periodMs: number;
  readonly catchUp: CatchUp;
  readonly maxAttempts: number;
  readonly backoffMs: number;
  readonly data?: unknown;
  /**
   * The W3C `traceparent` of the span that set it, when tracing was on: each fire's span links
   * to it.
   */
  readonly trace?: string;
}

/** One stored reminder. */
export interface StoredReminder {
  readonly id: string;
  readonly name: string;
  readonly spec: ReminderSpec;
  /** Bumped by every `put`: a claim made under an older schedule is refused. */
  readonly gen: number;
  /** The tick number of the schedule's first fire (the last tick claimed before it, + 1). */
  readonly t0: number;
  /** The last tick claimed (-1: none). */
  readonly last: number;
}

/** One tick to claim. */
export interface TickClaim {
  readonly id: string;
  readonly name: string;
  /** The schedule it was computed from. */
  readonly gen: number;
  readonly tick: number;
}

/**
 * A claim's result: `ok` (this owner delivers the tick), `taken` (that tick or a later one was
 * claimed already: never deliver it), `gone` (deleted), `stale` (the schedule was replaced:
 * read it again).
 */
export type ClaimResult = 'ok' | 'taken' | 'gone' | 'stale';

/**
 * Where reminders live, grouped by (kind, shard) so the owner of a shard loads exactly its own
 * (RedisReminderStore; MemoryReminderStore for one process). The fencing contract, the same
 * as grain state's: every write an owner makes for a shard carries the epoch of its claim on the
 * shard, and the store refuses it (ReminderFencedError) once a write or load with a higher
 * epoch has been seen for that shard. Claims are compare-and-set on the tick, so no tick number
 * is claimed twice whatever the epochs.
 */
export interface ReminderStore {
  /**
   * Connects and checks what the store promises (RedisReminderStore: its durability level);
   * Cluster.start awaits it before the member joins. Optional: a store without a check omits it.
   */
  open?(): Promise<void>;
  /**
   * The store's clock, epoch ms (RedisReminderStore: Redis `TIME`). Members plan every fire on
   * it, read every few seconds and carried by their monotonic clock, so all of them agree on what
   * is due whatever their own wall clocks say. Optional: without it each member's wall clock.
   */
  time?(): Promise<number>;
  /** Takes the member's logger (Cluster.start), for a store that logs. */
  useLogger?(logger: Logger): void;
  /**
   * Fences the shard at `epoch` (later writes with a lower epoch are refused) and returns every
   * reminder of it. @throws ReminderFencedError when a higher epoch was seen.
   */
  load(kind: string, shard: number, epoch: number): Promise<StoredReminder[]>;
  /**
   * `load` of several shards of one kind in one store call (an owner acquires thousands of
   * shards at start): per shard, in order, its reminders or the ReminderFencedError `load`
   * would throw. Optional: without it the owner calls `load` per shard. @throws as `load` for
   * anything but a fence (then none of the shards counts as loaded).
   */
  loadMany?(
    kind: string,
    shards: ReadonlyArray<{ shard: number; epoch: number }>,
  ): Promise<Array<StoredReminder[] | ReminderFencedError>>;
  /** Creates or replaces a reminder; its ticks go on from the last claimed. */
  put(
    kind: string,
    shard: number,
    id: string,
    name: string,
    spec: ReminderSpec,
  ): Promise<StoredReminder>;
  /** One reminder, or undefined. */
  get(kind: string, shard: number, id: string, name: string): Promise<StoredReminder | undefined>;
  /** Deletes a reminder (and a job's outcome); false when there was neither. */
  remove(kind: string, shard: number, id: string, name: string): Promise<boolean>;
  /** The reminders of one grain. */
  list(kind: string, shard: number, id: string): Promise<StoredReminder[]>;
  /**
   * Claims ticks of one shard, each on its own, in order. @throws ReminderFencedError when a
   * higher epoch was seen for the shard (then none is claimed).
   */
  claim(
    kind: string,
    shard: number,
    epoch: number,
    claims: readonly TickClaim[],
  ): Promise<ClaimResult[]>;
  /**
   * Records a job's outcome and deletes the job, if its schedule is still `gen` (false when it
   * was replaced or deleted meanwhile). @throws ReminderFencedError.
   */
  finish(
    kind: string,
    shard: number,
    epoch: number,
    id: string,
    name: string,
    gen: number,
    outcome: JobOutcome,
  ): Promise<boolean>;
  /** A job's recorded outcome. */
  outcome(kind: string, shard: number, id: string, name: string): Promise<JobOutcome | undefined>;
  /** Releases what the store opened. */
  close(): Promise<void>;
}

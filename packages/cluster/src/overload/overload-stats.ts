import type { ExpiredDrops } from '@granary/core';
import type { OverloadLimit } from './errors';
import type { DelayReader, LoadShedder } from './load-shedder';
import type { RetryBudget } from './retry-budget';

/**
 * The overload counters a member keeps as it calls and serves grains (one object per member,
 * written on the call paths: plain fields, no map lookups).
 */
export class OverloadCounters {
  /** Grain calls of this member in flight (a gauge). */
  outstanding = 0;
  /** Calls refused here by maxOutstandingCalls. */
  refusedOutstanding = 0;
  /** Calls refused here on behalf of an owner that sheds load (OwnerThrottle). */
  heldBack = 0;
  /** Calls that expired before an attempt was sent (the caller's retry loop). */
  droppedBeforeSend = 0;
  /** Calls that expired in a grain's mailbox: dropped before their turn. */
  droppedInMailbox = 0;
  /** Replies not sent because their call's deadline had passed when the turn ended. */
  droppedReplies = 0;
}

/** What `Cluster.overloadStats()` reports: gauges now, counters since start. */
export interface OverloadStats {
  /** Grain calls of this member in flight now. */
  outstanding: number;
  /** Calls this member accepted and has not finished (queued in mailboxes or running). */
  pending: number;
  /** True while this member sheds load. */
  shedding: boolean;
  /** Times this member started shedding. */
  sheddingEpisodes: number;
  /** The largest run-queue delay (ms) measured since the last call of overloadStats. */
  runQueueDelayMs: number;
  /** Calls refused with OverloadedError, by the limit (this member's own, as caller or owner). */
  refused: Record<OverloadLimit, number>;
  /** Calls this member refused itself, holding them back from an owner that sheds load. */
  heldBack: number;
  /**
   * Work dropped because its caller's deadline had passed, by where it waited: `send` (before
   * an attempt left this member: the retry loop, core's outbound batch), `arrival` (a request
   * received already expired), `mailbox` (expired before its turn), `reply` (a reply nobody
   * waits for any more).
   */
  drops: { send: number; arrival: number; mailbox: number; reply: number };
  /** Retries after OverloadedError (and counted re-sends): spent, and refused by the budget. */
  retries: { spent: number; refusedByBudget: number };
}

/**
 * A member's overload figures, as caller (counters, retry budget) and as owner (load shedder),
 * for one reader of the run-queue delay maximum (each reader resets its own).
 */
export function overloadStatsOf(
  c: OverloadCounters,
  load: LoadShedder,
  expired: ExpiredDrops,
  budget: RetryBudget,
  reader: DelayReader,
): OverloadStats {
  return {
    outstanding: c.outstanding,
    pending: load.pending,
    shedding: load.shedding,
    sheddingEpisodes: load.episodes,
    runQueueDelayMs: load.takeMaxDelay(reader),
    refused: { maxOutstandingCalls: c.refusedOutstanding, ...load.refused },
    heldBack: c.heldBack,
    drops: {
      send: c.droppedBeforeSend + expired.beforeSend,
      arrival: expired.onArrival,
      mailbox: c.droppedInMailbox,
      reply: c.droppedReplies,
    },
    retries: { spent: budget.spent, refusedByBudget: budget.refused },
  };
}

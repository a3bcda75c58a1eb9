import type { TimerHandle } from '@granary/core';

/** Shortest and longest period between checks of running turns. */
const MIN_TICK_MS = 10;
const MAX_TICK_MS = 250;

/** What the watch needs to schedule its checks (the actor system's timer wheel). */
export interface WatchTimers {
  schedule(delayMs: number, callback: () => void): TimerHandle;
}

/** The clock turns are timed on (the actor system's: monotonic ms). */
export interface WatchClock {
  monotonic(): number;
}

/** One awaiting turn as the watch sees it. */
export interface WatchedTurn {
  /** The clock's monotonic() when the turn started. */
  readonly since: number;
  /** A non-reentrant turn: it holds the activation's queue, so it can be stuck. */
  readonly blocking: boolean;
  /** Seen past longTurnMs (the watch reports it once). */
  long: boolean;
  /** Seen past turnTimeoutMs (reported once). */
  stuck: boolean;
}

/**
 * Watches one kind's awaiting turns (a synchronous turn is measured when it returns: nothing can
 * look at it while it holds the loop). Turns are kept in start order in a Set, so a check walks
 * only the turns old enough to matter and stops at the first young one; one timer runs while any
 * turn is watched, none otherwise. A turn costs a Set insert and delete.
 */
export class TurnWatch<T extends WatchedTurn> {
  private readonly running = new Set<T>();
  private timer: TimerHandle | undefined = undefined;
  private readonly tickMs: number;

  constructor(
    private readonly timers: WatchTimers,
    private readonly clock: WatchClock,
    private readonly longTurnMs: number,
    private readonly turnTimeoutMs: number,
    private readonly onLong: (turn: T, ms: number) => void,
    private readonly onStuck: (turn: T, ms: number) => void,
  ) {
    const first = Math.min(longTurnMs, turnTimeoutMs);
    this.tickMs = Math.min(MAX_TICK_MS, Math.max(MIN_TICK_MS, first / 4));
  }

  /** An awaiting turn started. */
  add(turn: T): void {
    this.running.add(turn);
    this.timer ??= this.timers.schedule(this.tickMs, this.tick);
  }

  /** The turn ended; a turn that ran past longTurnMs and was not seen yet is reported now. */
  remove(turn: T, now: number): void {
    this.running.delete(turn);
    this.check(turn, now - turn.since);
  }

  private check(turn: T, ms: number): void {
    if (!turn.long && ms > this.longTurnMs) {
      turn.long = true;
      this.onLong(turn, ms);
    }
  }

  private readonly tick = (): void => {
    this.timer = undefined;
    const now = this.clock.monotonic();
    const young = Math.min(this.longTurnMs, this.turnTimeoutMs);
    for (const turn of this.running) {
      const ms = now - turn.since;
      if (ms <= young) break; // the rest started later
      this.check(turn, ms);
      if (turn.blocking && !turn.stuck && ms > this.turnTimeoutMs) {
        turn.stuck = true;
        this.onStuck(turn, ms);
      }
    }
    if (this.running.size > 0) this.timer = this.timers.schedule(this.tickMs, this.tick);
  };
}

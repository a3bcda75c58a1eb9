import type { Clock } from '@granary/core';
import type { ClusterLogger } from '../../internal/logger';

/** How often the store's clock is read again (a read costs one small command per member). */
const SYNC_MS = 10_000;
/** Readings per sync, back to back: the one with the shortest round trip is kept. */
const SAMPLES = 3;
/** A round trip this short needs no further sample, and no early re-sync. */
const GOOD_RTT_MS = 10;
/** How soon a sync whose best round trip was longer than GOOD_RTT_MS is made again. */
const RETRY_SYNC_MS = 1000;
/**
 * A reading in use for this long is replaced by the next, however slow: the store's own clock
 * may have been stepped, and the member must follow it.
 */
const MAX_OFFSET_AGE_MS = 60_000;
/** How long the first fires wait for the first reading before planning on the member's clock. */
const FIRST_SYNC_WAIT_MS = 2000;

/**
 * The time reminders are planned on: the store's clock (`ReminderStore.time`), carried between
 * readings by the member's monotonic clock. Every member then agrees on which tick is due, and a
 * member whose wall clock is wrong or steps (a VM resumed, NTP correcting) moves no tick: on its
 * own clock, 20 s fast, it claimed ticks 20 s early (each store-wide, so no member fired them
 * again), reported the ones in between as skipped, and once corrected fired nothing for 20 s.
 * A store without `time` (or one not read yet) leaves the member's wall clock in charge.
 */
export class StoreClock {
  /** Store epoch ms minus monotonic ms, from the reading in use. */
  private offset: number | undefined;
  /** The round trip of the reading in use (its error is at most half of it), and when. */
  private rtt = Infinity;
  private takenAt = 0;
  private timer: unknown = undefined;
  private stopped = false;
  /** Settles once the first reading succeeded or failed (bounded by FIRST_SYNC_WAIT_MS). */
  readonly first: Promise<void>;

  constructor(
    private readonly clock: Clock,
    private readonly read: (() => Promise<number>) | undefined,
    private readonly logger: ClusterLogger,
  ) {
    if (read === undefined) {
      this.first = Promise.resolve();
      return;
    }
    const first = this.sync();
    this.first = Promise.race([
      first,
      new Promise<void>((resolve) => unref(clock.setTimer(resolve, FIRST_SYNC_WAIT_MS))),
    ]);
    this.schedule();
  }

  /**
   * Epoch ms on the store's clock (the member's wall clock until the store was read), whole ms
   * like `Date.now()`: ticks, lateness and stored fire times stay integers.
   */
  now(): number {
    return this.offset === undefined
      ? this.clock.now()
      : Math.floor(this.clock.monotonic() + this.offset);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.stopped) return;
    // On the member's clock (a simulation drives it), like every other timer of the runtime.
    this.timer = this.clock.setTimer(
      () => void this.sync().finally(() => this.schedule()),
      this.rtt > GOOD_RTT_MS ? RETRY_SYNC_MS : SYNC_MS,
    );
    unref(this.timer);
  }

  /**
   * Reads the store's clock (up to SAMPLES times) and keeps the reading with the shortest round
   * trip, if it is no worse than twice the one in use or that one is old. A reading is taken
   * somewhere in its round trip, so its error is up to half of it: one reading replacing the
   * last, whatever its round trip, put a member's plan 129 ms behind for 10 s after a busy
   * start-up (the reply waited for the loop), and every fire of it was that late.
   */
  private async sync(): Promise<void> {
    let best: { offset: number; rtt: number } | undefined;
    try {
      for (let i = 0; i < SAMPLES && !(best !== undefined && best.rtt <= GOOD_RTT_MS); i++) {
        const before = this.clock.monotonic();
        const at = await this.read!();
        const after = this.clock.monotonic();
        // The reading was taken somewhere in the round trip: its middle.
        if (best === undefined || after - before < best.rtt) {
          best = { offset: at - (before + after) / 2, rtt: after - before };
        }
      }
    } catch (err) {
      // The offset in use stays good (the monotonic clock does not step); the next sync retries.
      this.logger.debug({ err }, 'reminders: could not read the store clock');
    }
    if (best === undefined) return;
    const now = this.clock.monotonic();
    if (best.rtt <= 2 * this.rtt + 1 || now - this.takenAt >= MAX_OFFSET_AGE_MS) {
      this.offset = best.offset;
      this.rtt = best.rtt;
      this.takenAt = now;
    }
  }
}

/** A real clock's timer must not keep the process alive; a virtual one has nothing to unref. */
function unref(timer: unknown): void {
  (timer as { unref?: () => void } | undefined)?.unref?.();
}

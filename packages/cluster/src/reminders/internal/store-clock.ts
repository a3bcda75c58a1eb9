import type { Clock } from '@granary/core';
import type { ClusterLogger } from '../../internal/logger';

/** How often the store's clock is read again (a read costs one small command per member). */
const SYNC_MS = 10_000;
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
  /** Store epoch ms minus monotonic ms, from the latest reading. */
  private offset: number | undefined;
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
      SYNC_MS,
    );
    unref(this.timer);
  }

  private async sync(): Promise<void> {
    const before = this.clock.monotonic();
    try {
      const at = await this.read!();
      // The reading was taken somewhere in the round trip: its middle.
      this.offset = at - (before + this.clock.monotonic()) / 2;
    } catch (err) {
      // The last offset stays good (the monotonic clock does not step); the next reading retries.
      this.logger.debug({ err }, 'reminders: could not read the store clock');
    }
  }
}

/** A real clock's timer must not keep the process alive; a virtual one has nothing to unref. */
function unref(timer: unknown): void {
  (timer as { unref?: () => void } | undefined)?.unref?.();
}

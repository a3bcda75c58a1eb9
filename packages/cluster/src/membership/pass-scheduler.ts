import { SYSTEM_CLOCK, type Clock } from '@granary/core';
import type { Topology } from './topology';

/**
 * Delay of the placement pass after a lone topology event (none in the BURST_WINDOW_MS before):
 * none. A failover pays it on its critical path (the dead member's key goes, its ranges are
 * claimed once the pass ran), and 20 ms here made grains-failover's last grain answer ~20-40 ms
 * later (the callers' backoff then missed the claim by one more step). An event that follows
 * within the window is coalesced with the ones after it (PASS_BURST_QUIET_MS).
 */
export const PASS_QUIET_MS = 0;
/**
 * Quiet time when the previous event came less than BURST_WINDOW_MS earlier (a join storm, a
 * rolling deploy, many members re-registering at once): events a few hundred ms apart are
 * placed once, not one pass each.
 */
export const PASS_BURST_QUIET_MS = 250;
/** Events closer than this count as a burst. */
const BURST_WINDOW_MS = 1000;
/** However busy the membership, a pass runs at most this long after the first event it covers. */
export const PASS_MAX_DELAY_MS = 1000;

/**
 * Coalesces topology changes into placement passes: a pass runs on the latest topology once no
 * new one arrived for a quiet time, and at the latest PASS_MAX_DELAY_MS after the first unplaced
 * one. Every member converges on the same final topology whatever it skipped: a pass depends
 * only on the topology it is given.
 */
export class PassScheduler {
  private pending: Topology | undefined;
  private firstAt = 0;
  private lastAt = -Infinity;
  private timer: unknown;

  constructor(
    private readonly pass: (t: Topology) => void,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  /** A new topology to place (replaces one not placed yet). */
  request(t: Topology): void {
    const now = this.clock.monotonic();
    const quiet = now - this.lastAt < BURST_WINDOW_MS ? PASS_BURST_QUIET_MS : PASS_QUIET_MS;
    this.lastAt = now;
    if (this.pending === undefined) this.firstAt = now;
    this.pending = t;
    this.clock.clearTimer(this.timer);
    const delay = Math.max(0, Math.min(quiet, this.firstAt + PASS_MAX_DELAY_MS - now));
    this.timer = this.clock.setTimer(() => this.flush(), delay);
  }

  /** Runs the pending pass now, if any. */
  flush(): void {
    this.clock.clearTimer(this.timer);
    this.timer = undefined;
    const t = this.pending;
    this.pending = undefined;
    if (t) this.pass(t);
  }

  /** Drops the pending pass. */
  stop(): void {
    this.clock.clearTimer(this.timer);
    this.pending = undefined;
  }
}

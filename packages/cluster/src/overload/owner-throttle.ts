import type { RandomSource } from '@granary/core';
import { SlidingCounts } from './sliding-counts';

/**
 * How many requests an owner is sent per request it accepts, at most (Google SRE's
 * client-side throttling, "Handling Overload": K = 2). The owner still sees the excess up to
 * K x what it serves, so it notices when it can serve more; beyond that, refusing here costs the
 * owner nothing.
 */
const K = 2;
/** The window of requests and accepts: long enough for a steady estimate, short enough to end. */
const WINDOW_MS = 2000;

/**
 * Client-side throttling of the calls this member sends to one owner while the owner sheds load.
 * A refusal costs an overloaded owner work it could spend on calls it serves: it receives the
 * call, decodes it, and encodes and sends the refusal. At 4x its capacity it would spend more on
 * refusals than on the calls it accepts. So once the owner refuses a call for load
 * (`loadShedding`, `maxPendingCalls`), the caller counts, over the last 2 s, the calls it meant to
 * send there (`requests`) and those the owner accepted (`accepts`), and refuses new calls itself
 * with probability `(requests - K * accepts) / (requests + 1)`: the owner is sent about K times
 * what it accepts. Disarmed (no counting, no cost) once a window passes without a refusal.
 */
export class OwnerThrottle {
  /** Calls refused here on the owner's behalf. */
  refusedHere = 0;
  /** Epoch ms until which it counts and may refuse (a window after the last refusal); 0: idle. */
  armedUntil = 0;
  /** Requests (first) and accepts (second) over the window. */
  private readonly window = new SlidingCounts(WINDOW_MS);

  constructor(private readonly random: RandomSource) {}

  /**
   * A call to the owner is about to start at `now`: true when it should be refused here instead.
   * Counts it as a request while armed.
   */
  refuses(now: number): boolean {
    if (now >= this.armedUntil) {
      if (this.armedUntil !== 0) this.disarm();
      return false;
    }
    const w = this.window.at(now);
    w.addFirst();
    const p = (w.first - K * w.second) / (w.first + 1);
    if (p <= 0 || this.random() >= p) return false;
    this.refusedHere++;
    return true;
  }

  /** The owner accepted a call (it answered, or failed it for another reason than load). */
  accepted(): void {
    if (this.armedUntil !== 0) this.window.addSecond();
  }

  /** The owner refused a call for load at `now`: count from now on, for a window. */
  refused(now: number): void {
    if (this.armedUntil === 0) this.window.at(now);
    this.armedUntil = now + WINDOW_MS;
  }

  private disarm(): void {
    this.armedUntil = 0;
    this.window.reset();
  }
}

import type { RetryBudgetOptions } from './overload-options';
import { SlidingCounts } from './sliding-counts';

/**
 * How many retries a member may spend (Finagle's RetryBudget, Linkerd's retry budget): at most
 * `ratio` of the calls started in the last `windowMs`, plus `minPerSecond` over the window. Under
 * overload a retry is one more call for a target that already refused one; the budget keeps
 * retries from multiplying the offered load (at most +10% by default), while a member that
 * rarely fails still retries every failure.
 */
export class RetryBudget {
  /** Retries allowed and taken. */
  spent = 0;
  /** Retries refused for want of budget. */
  refused = 0;
  /** Calls (first) and retries (second) in the window. */
  private readonly window: SlidingCounts;
  private readonly floor: number;

  constructor(private readonly options: Readonly<Required<RetryBudgetOptions>>) {
    this.window = new SlidingCounts(options.windowMs);
    this.floor = (options.minPerSecond * options.windowMs) / 1000;
  }

  /** A call started at `now` (the member's monotonic ms): it adds to the budget. */
  callStarted(now: number): void {
    this.window.at(now).addFirst();
  }

  /** True when a retry at `now` would be allowed (nothing taken, nothing counted). */
  hasRoom(now: number): boolean {
    const w = this.window.at(now);
    return w.second < this.options.ratio * w.first + this.floor;
  }

  /** Takes one retry from the budget; false (counted as refused) when it is spent. */
  tryRetry(now: number): boolean {
    const w = this.window.at(now);
    if (w.second >= this.options.ratio * w.first + this.floor) {
      this.refused++;
      return false;
    }
    w.addSecond();
    this.spent++;
    return true;
  }
}

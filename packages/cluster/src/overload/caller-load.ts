import type { RandomSource } from '@granary/core';
import { CallerDelay } from './caller-delay';
import { OverloadedError } from './errors';
import type { ResolvedOverloadOptions } from './overload-options';
import type { OverloadCounters } from './overload-stats';
import { OwnerThrottle } from './owner-throttle';
import { RetryBudget } from './retry-budget';

/** Throttles kept at most; beyond, idle ones go (members that left, restarted on new ports). */
const MAX_THROTTLES = 1024;

/**
 * The calling side of overload control for one member: the bound on its outstanding calls, its
 * retry budget, and a throttle per owner that sheds load. The grain caller asks it before a call
 * and tells it each attempt's outcome.
 */
export class CallerLoad {
  readonly budget: RetryBudget;
  /** How long this member's own event loop makes a call wait. */
  readonly delay: CallerDelay;
  private readonly throttles = new Map<string, OwnerThrottle>();
  private readonly maxOutstanding: number;

  constructor(
    options: ResolvedOverloadOptions,
    readonly counters: OverloadCounters,
    private readonly random: RandomSource,
    private readonly memberId: string,
    monotonic: () => number,
  ) {
    this.budget = new RetryBudget(options.retryBudget);
    this.delay = new CallerDelay(monotonic);
    this.maxOutstanding = options.maxOutstandingCalls;
  }

  /** The error a new call fails with at once when maxOutstandingCalls are in flight. */
  full(kind: string, identity: string): OverloadedError | undefined {
    const counters = this.counters;
    if (counters.outstanding < this.maxOutstanding) return undefined;
    counters.refusedOutstanding++;
    return OverloadedError.of('maxOutstandingCalls', this.memberId, kind, String(identity));
  }

  /**
   * Whether a call with `timeoutMs` made now can be answered in time: maxOutstandingCalls would
   * not refuse it, and its deadline is longer than this member, saturated by its own calls,
   * makes a call wait (CallerDelay). Counts nothing, allocates nothing.
   */
  admits(timeoutMs: number): boolean {
    const outstanding = this.counters.outstanding;
    return outstanding < this.maxOutstanding && !this.delay.tooLate(timeoutMs, outstanding);
  }

  /** Stops the delay probe (the member stops). */
  close(): void {
    this.delay.close();
  }

  /**
   * The error a new call to `address` fails with at once because its throttle holds it back,
   * or undefined. `throttle` is the address's (cached on the grain's reference).
   */
  heldBack(
    throttle: OwnerThrottle,
    address: string,
    kind: string,
    identity: string,
    now: number,
  ): OverloadedError | undefined {
    if (throttle.armedUntil === 0 || !throttle.refuses(now)) return undefined;
    this.counters.heldBack++;
    return OverloadedError.of('loadShedding', address, kind, identity, true);
  }

  /** The throttle of the owner at `address` (made on first use). */
  throttleOf(address: string): OwnerThrottle {
    let t = this.throttles.get(address);
    if (t === undefined) {
      if (this.throttles.size >= MAX_THROTTLES) this.dropIdle();
      t = new OwnerThrottle(this.random);
      this.throttles.set(address, t);
    }
    return t;
  }

  /** An attempt to `address` ended (`overloaded`: with OverloadedError of that owner's load). */
  outcome(address: string, error: Error | undefined, now: number): void {
    if (error !== undefined && OverloadedError.is(error) && OverloadedError.ownerLoad(error)) {
      this.throttleOf(address).refused(now);
    } else this.throttles.get(address)?.accepted();
  }

  private dropIdle(): void {
    for (const [address, t] of this.throttles)
      if (t.armedUntil === 0) this.throttles.delete(address);
  }
}

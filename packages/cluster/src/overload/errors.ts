import { registerErrorClasses } from '@granary/core';
import { ClusterError } from '../errors';

/**
 * Which bound refused a call (each is an option, see OverloadOptions and KindOptions):
 * - `maxOutstandingCalls`: the calling member has that many grain calls in flight;
 * - `maxPendingCalls`: the owner holds that many accepted calls not yet finished;
 * - `mailbox.capacity`: the grain's mailbox (its kind's option) is full;
 * - `loadShedding`: the owner is saturated and sheds new calls and activations.
 */
export type OverloadLimit =
  'maxOutstandingCalls' | 'maxPendingCalls' | 'mailbox.capacity' | 'loadShedding';

const WHY: Record<OverloadLimit, string> = {
  maxOutstandingCalls: 'this member has maxOutstandingCalls grain calls in flight',
  maxPendingCalls: 'it holds maxPendingCalls accepted calls',
  'mailbox.capacity': "the grain's mailbox is full (its kind's mailbox.capacity)",
  loadShedding: 'it is saturated and sheds new calls (loadShedding)',
};

/**
 * A grain call refused at once because a bound was reached: nothing of it ran, so it may be
 * sent again, later and with backoff (the caller's retry loop does so within the member's retry
 * budget and the call's deadline). `limit` names the bound, `member` the member that refused.
 *
 * Made without a stack (`OverloadedError.of`, and rebuilt from the wire without one): under
 * overload it is made once per refused call, and a stack would cost more than the refusal.
 */
export class OverloadedError extends ClusterError {
  static override readonly code = 'ERR_OVERLOADED';
  /** Rebuilt from the wire without capturing a stack (core's errorFromData reads this). */
  static readonly stackless = true;
  override readonly name = 'OverloadedError';

  constructor(
    readonly limit: OverloadLimit,
    /** The member that refused the call (with `heldBack`: the owner it was held back from). */
    readonly member: string,
    readonly kind: string,
    readonly identity: string,
    /** The calling member refused it itself, on behalf of an owner that sheds load. */
    heldBack = false,
  ) {
    const call = `grain call to ${kind}/${identity} refused`;
    super(
      heldBack
        ? `${call}: its owner ${member} sheds load (loadShedding) and this member holds calls to it back; retry later, with backoff`
        : `${call}${limit === 'maxOutstandingCalls' ? '' : ` by ${member}`}: ${WHY[limit]}; retry later, with backoff`,
    );
  }

  /**
   * A new error without a stack trace (the refusal paths run once per refused call).
   * `heldBack`: refused by the caller on behalf of `member`, its owner (OwnerThrottle).
   */
  static of(
    limit: OverloadLimit,
    member: string,
    kind: string,
    identity: string,
    heldBack = false,
  ): OverloadedError {
    const saved = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      return new OverloadedError(limit, member, kind, identity, heldBack);
    } finally {
      Error.stackTraceLimit = saved;
    }
  }

  /** True for a refusal that says its owner as a whole is overloaded (not one grain's mailbox). */
  static ownerLoad(error: Error): boolean {
    const limit = (error as Partial<OverloadedError>).limit;
    return limit === 'loadShedding' || limit === 'maxPendingCalls';
  }
}

registerErrorClasses(OverloadedError);

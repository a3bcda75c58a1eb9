import {
  DeadLetterError,
  EndpointUnavailableError,
  HandshakeError,
  MailboxFullError,
  TimeoutError,
} from '@granary/core';
import {
  CallOutcomeUnknownError,
  DeadlineExceededError,
  GrainError,
  MemberFencedError,
  NoHostError,
  NotOwnerError,
} from '../../errors';
import type { CallOutcome } from '../../telemetry/attributes';
import { OverloadedError } from '../../overload/errors';
import type { GrainCallOptions } from '../grain';

/** What the classification needs to know of a call. */
export interface CallFacts {
  readonly kind: string;
  readonly identity: string;
  readonly options: GrainCallOptions | undefined;
}

/**
 * What a grain call does after an attempt that did not end with the grain's answer:
 * - `retry`: the call provably did not reach grain code (not the owner, no router there, never
 *   sent, the peer left in order): try again within the deadline, at `hint` first if given;
 * - `budget`: a retry may help but costs one of the call's `retries` (the grain's mailbox was
 *   full; an idempotent call's outcome is unknown); `error` is what the call fails with once
 *   they are spent;
 * - `overloaded`: a bound refused the call before anything of it ran (OverloadedError): retry
 *   later with backoff, if the member's retry budget, the call's `retries` and its deadline
 *   allow; `error` is what the call fails with otherwise;
 * - `deadline`: the attempt ran out of the call's time (core's timeout of the request);
 * - `fail`: final, `error` goes to the caller as it is (an error of grain code, a deadlock,
 *   a denied activation, an unknown outcome of a call that is not idempotent, ...).
 */
export type Setback =
  | {
      readonly kind: 'retry';
      readonly error: Error;
      readonly hint: string | undefined;
      /** Not sent at all: held back from a silent owner (see silentOwner). */
      readonly held?: boolean;
    }
  | { readonly kind: 'budget'; readonly error: Error }
  | { readonly kind: 'overloaded'; readonly error: Error }
  | { readonly kind: 'deadline'; readonly error: Error }
  | { readonly kind: 'fail'; readonly error: Error };

/**
 * True when the call was written to a connection that broke without the peer saying goodbye: it
 * may have reached grain code. Everything else the transport reports (never sent, refused, no
 * router, a peer that left in order after answering what it handled) provably did not.
 */
function outcomeUnknown(error: EndpointUnavailableError): boolean {
  return error.inFlight && !error.peerLeft;
}

/**
 * True when the owner refused this member's or client's handshake for its configuration (the
 * secret, the cluster name, a certificate, the protocol version): every attempt until the
 * deadline would be refused the same way, so the call fails at once with the refusal.
 */
function refusedForGood(error: EndpointUnavailableError): boolean {
  const cause = error.cause;
  return HandshakeError.is(cause) && !cause.retryable;
}

/**
 * The one place a grain call's attempt is classified: the first attempt's reply sink and the
 * retry loop both ask here. `reply` and `error` are the attempt's outcome as core hands it to
 * a request (an error reply of the owner, such as NotOwnerError, arrives as `error`);
 * `address` is the member the attempt went to; `stopping`: this member is shutting down (the
 * loop then ends the call with ClusterStoppedError rather than an unknown outcome).
 * Undefined: `reply` is the grain's answer (or a send's acknowledgement).
 */
export function setbackOf(
  call: CallFacts,
  error: Error | undefined,
  address: string,
  stopping: boolean,
): Setback | undefined {
  if (error === undefined) return undefined;
  // Matched by code (`is`), so errors of another copy of a package and errors rebuilt from the
  // wire classify alike.
  if (GrainError.is(error)) return { kind: 'fail', error };
  if (NotOwnerError.is(error)) {
    const owner = error.owner;
    return { kind: 'retry', error, hint: owner !== address ? owner : undefined };
  }
  // The member is fenced and re-registers by itself; meanwhile its shards move elsewhere.
  if (MemberFencedError.is(error)) return { kind: 'retry', error, hint: undefined };
  if (DeadLetterError.is(error)) return { kind: 'retry', error, hint: undefined };
  if (EndpointUnavailableError.is(error)) {
    if (refusedForGood(error)) return { kind: 'fail', error };
    if (!outcomeUnknown(error) || stopping) return { kind: 'retry', error, hint: undefined };
    const unknown = new CallOutcomeUnknownError(call.kind, call.identity, address, {
      cause: error,
    });
    if (call.options?.idempotent !== true) return { kind: 'fail', error: unknown };
    // Idempotent: retried within the deadline, as many times as `retries` allows if given.
    return call.options.retries === undefined
      ? { kind: 'retry', error, hint: undefined }
      : { kind: 'budget', error: unknown };
  }
  if (OverloadedError.is(error)) return { kind: 'overloaded', error };
  if (MailboxFullError.is(error)) return { kind: 'budget', error };
  if (TimeoutError.is(error)) return { kind: 'deadline', error };
  return { kind: 'fail', error };
}

/**
 * How a call that ended with `error` counts in the call metrics (undefined: the grain
 * answered): the grain's code threw, the deadline passed (also with no member to take it), the
 * outcome is unknown, or another final error.
 */
export function outcomeOf(error: Error | undefined): CallOutcome {
  if (error === undefined) return 'ok';
  if (GrainError.is(error)) return 'app_error';
  if (DeadlineExceededError.is(error) || NoHostError.is(error)) return 'deadline_exceeded';
  if (CallOutcomeUnknownError.is(error)) return 'outcome_unknown';
  return 'error';
}

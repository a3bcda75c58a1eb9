import { GranaryError, registerErrorClasses } from '@granary/core';

/**
 * Errors of @granary/cluster. Every class is a core `GranaryError` with a fixed `name` and a
 * stable `code` (match with `SomeError.is(err)`); messages name the option that controls the
 * behaviour. Bad options and arguments are core's `InvalidOptionError` / `InvalidArgumentError`,
 * an unknown kind core's `UnknownKindError`. Other parts of the package append their classes at
 * the end of this file.
 */

/** Base class of the errors only @granary/cluster throws. */
export class ClusterError extends GranaryError {
  static override readonly code: string = 'ERR_CLUSTER';
  override readonly name: string = 'ClusterError';
}

/** The provider could not register the member before `joinTimeoutMs` elapsed. */
export class JoinTimeoutError extends ClusterError {
  static override readonly code = 'ERR_JOIN_TIMEOUT';
  override readonly name = 'JoinTimeoutError';
}

/** A provider operation that needs membership was called before join() or after leave(). */
export class NotJoinedError extends ClusterError {
  static override readonly code = 'ERR_NOT_JOINED';
  override readonly name = 'NotJoinedError';
  constructor(operation: string) {
    super(`${operation} needs a joined member: call join() first`);
  }
}

/**
 * The member cannot prove its lease is alive (keep-alive failed, or none succeeded within the TTL
 * minus the safety margin): its claims are treated as gone until it re-registers.
 */
export class LeaseLostError extends ClusterError {
  static override readonly code = 'ERR_LEASE_LOST';
  override readonly name = 'LeaseLostError';
  constructor(operation: string, options?: { cause?: unknown }) {
    super(`${operation} refused: the member's lease is lost (it re-registers by itself)`, options);
  }
}

/** The cluster was shut down; the operation cannot run any more. */
export class ClusterStoppedError extends ClusterError {
  static override readonly code = 'ERR_CLUSTER_STOPPED';
  override readonly name = 'ClusterStoppedError';
  constructor(operation: string) {
    super(`${operation}: the cluster member has shut down`);
  }
}

/**
 * Code thrown by a grain (`receive` or `onActivate`), carried to the caller. Its `code` is
 * `ERR_GRAIN` like every GrainError's; `originalCode` and `originalName` are those of the error
 * the grain threw (`originalCode` undefined if it had none). Never retried.
 */
export class GrainError extends ClusterError {
  static override readonly code = 'ERR_GRAIN';
  override readonly name = 'GrainError';
  constructor(
    readonly kind: string,
    readonly identity: string,
    readonly originalName: string,
    readonly originalCode: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

/** A grain call did not get an answer before its deadline (`timeoutMs`), retries included. */
export class DeadlineExceededError extends ClusterError {
  static override readonly code = 'ERR_DEADLINE_EXCEEDED';
  override readonly name = 'DeadlineExceededError';
  constructor(
    readonly kind: string,
    readonly identity: string,
    readonly timeoutMs: number,
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    const last = (options?.cause as { message?: string } | undefined)?.message;
    super(
      `call to ${kind}/${identity} exceeded its deadline of ${Math.round(timeoutMs)} ms (timeoutMs) after ${attempts} attempt(s)${last ? `; last error: ${last}` : ''}`,
      options,
    );
  }

  /**
   * Without a stack, as the caller's retry loop makes it when a deadline passes: under overload
   * it is made once per expired call, and capturing a stack (of the retry loop or a timer, not
   * of the caller) cost more than the rest of the call; `cause` keeps the last attempt's error.
   */
  static of(
    kind: string,
    identity: string,
    timeoutMs: number,
    attempts: number,
    options?: { cause?: unknown },
  ): DeadlineExceededError {
    const saved = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      return new DeadlineExceededError(kind, identity, timeoutMs, attempts, options);
    } finally {
      Error.stackTraceLimit = saved;
    }
  }
}

/** The kind's `canActivate(identity)` refused the identity. No retry. */
export class ActivationDeniedError extends ClusterError {
  static override readonly code = 'ERR_ACTIVATION_DENIED';
  override readonly name = 'ActivationDeniedError';
  constructor(
    readonly kind: string,
    readonly identity: string,
  ) {
    super(`activation of ${kind}/${identity} denied by the kind's canActivate option`);
  }
}

/** A call would wait on a non-reentrant grain that is itself waiting in the same call chain. */
export class DeadlockError extends ClusterError {
  static override readonly code = 'ERR_DEADLOCK';
  override readonly name = 'DeadlockError';
  constructor(
    /** The grains of the chain, first caller first, ending with the target again. */
    readonly chain: readonly string[],
  ) {
    super(
      `deadlock: call chain ${chain.join(' -> ')} re-enters a non-reentrant grain (mark the kind or message reentrant to allow it)`,
    );
  }
}

/**
 * A grain's call whose chain (its waiting grains, carried for deadlock detection) is over
 * `maxBytes`: sent, it would close the link between the two members (their header limit).
 */
export class CallChainTooLongError extends ClusterError {
  static override readonly code = 'ERR_CALL_CHAIN_TOO_LONG';
  override readonly name = 'CallChainTooLongError';
  constructor(
    readonly depth: number,
    readonly maxBytes: number,
  ) {
    super(
      `a call chain of ${depth} waiting grains is over ${maxBytes} bytes of kind/identity (deadlock detection carries them): make a kind or message reentrant, or shorten the identities`,
    );
  }
}

/**
 * The member asked does not hold the grain's shard; `owner` is the member it believes owns it.
 * Retried by the caller within the deadline; seen by users only as the cause of a deadline error.
 */
export class NotOwnerError extends ClusterError {
  static override readonly code = 'ERR_NOT_OWNER';
  override readonly name = 'NotOwnerError';
  constructor(
    readonly kind: string,
    readonly identity: string,
    readonly owner: string | undefined,
  ) {
    super(
      `${kind}/${identity}: this member does not own its shard (believed owner: ${owner ?? 'none'})`,
    );
  }
}

/**
 * The cluster refused this member (another name or secret at the seed, a kind spec others
 * disagree with, etcd credentials etcd refuses). Not retried: the configuration has to change.
 */
export class JoinRefusedError extends ClusterError {
  static override readonly code = 'ERR_JOIN_REFUSED';
  override readonly name = 'JoinRefusedError';
}

/**
 * A grain call was sent to its owner and the connection to that member broke before the reply
 * came back: the grain may or may not have handled it. Not retried, so a non-idempotent call is
 * never applied twice; pass `{ idempotent: true }` (GrainCallOptions.idempotent) to retry anyway.
 */
export class CallOutcomeUnknownError extends ClusterError {
  static override readonly code = 'ERR_CALL_OUTCOME_UNKNOWN';
  override readonly name = 'CallOutcomeUnknownError';
  constructor(
    readonly kind: string,
    readonly identity: string,
    /** The member the call was sent to. */
    readonly address: string,
    options?: { cause?: unknown },
  ) {
    super(
      `call to ${kind}/${identity} reached member ${address}, which went away before replying: the grain may or may not have handled it (not retried; pass idempotent: true to retry)`,
      options,
    );
  }
}

/**
 * A turn of the grain has run longer than its kind's `turnTimeoutMs`: calls queued behind it,
 * and calls that arrive while it runs, fail with this at once. The activation deactivates when
 * the turn ends; the next call starts a new one. Not retried.
 */
export class TurnTimeoutError extends ClusterError {
  static override readonly code = 'ERR_TURN_TIMEOUT';
  override readonly name = 'TurnTimeoutError';
  constructor(
    readonly kind: string,
    readonly identity: string,
    readonly turnTimeoutMs: number,
    /** How long the stuck turn had run when it was found stuck. */
    readonly runningMs: number,
  ) {
    super(
      `${kind}/${identity}: a turn has run ${Math.round(runningMs)} ms, past the kind's turnTimeoutMs of ${turnTimeoutMs} ms; calls to it fail until that turn ends and the activation deactivates`,
    );
  }
}

/**
 * The member a call reached cannot serve any grain: it is fenced (its lease is lost, because it
 * cannot reach the membership store or its event loop stalled) and re-registers by itself.
 * Retried by the caller within the deadline; behind a NoHostError when it never ends.
 */
export class MemberFencedError extends ClusterError {
  static override readonly code = 'ERR_MEMBER_FENCED';
  override readonly name = 'MemberFencedError';
  constructor(
    readonly kind: string,
    readonly identity: string,
    /** The fenced member's id. */
    readonly member: string,
  ) {
    super(
      `${kind}/${identity}: member ${member} is fenced (its lease is lost: the membership store is unreachable from it, or it stalled); it re-registers by itself`,
    );
  }
}

/** Why no live member could take a call: what the caller saw while it retried. */
export interface NoHostDetails {
  /** Members hosting the kind that are leaving (draining for a graceful shutdown). */
  readonly leaving: number;
  /**
   * Members that hosted the kind and dropped out of the membership without leaving in order
   * (their lease expired: fenced or dead), and have not come back.
   */
  readonly dropped: number;
  /** Members that answered this call that they are fenced. */
  readonly fencedAnswers: number;
  /** This member itself is fenced (its own lease is lost): the membership store looks unreachable. */
  readonly membershipUnavailable: boolean;
  /** The caller's view of the cluster held no member at all (a wrong cluster name or prefix?). */
  readonly noMembers?: boolean | undefined;
}

/**
 * No live member hosts the kind (they are fenced, leaving or gone) for as long as the call
 * retried (its `timeoutMs`). Not an unknown kind: the kind was hosted in this member's view of
 * the cluster. The message says what the caller saw.
 */
export class NoHostError extends ClusterError {
  static override readonly code = 'ERR_NO_HOST';
  override readonly name = 'NoHostError';
  readonly leaving: number;
  readonly dropped: number;
  readonly fencedAnswers: number;
  readonly membershipUnavailable: boolean;
  readonly noMembers: boolean;
  constructor(
    readonly kind: string,
    readonly identity: string,
    readonly timeoutMs: number,
    readonly attempts: number,
    details: NoHostDetails,
    options?: { cause?: unknown },
  ) {
    const seen = [
      details.dropped > 0
        ? `${details.dropped} member(s) that hosted it dropped out of the membership (lease expired: fenced or dead)`
        : undefined,
      details.fencedAnswers > 0
        ? `${details.fencedAnswers} answer(s) from fenced members`
        : undefined,
      details.leaving > 0 ? `${details.leaving} member(s) hosting it are leaving` : undefined,
      details.membershipUnavailable
        ? "this member's own lease is lost too: the membership store looks unreachable"
        : undefined,
      details.noMembers === true
        ? 'the caller sees no member of the cluster at all: do the members use the cluster name (and etcd prefix) it was given?'
        : undefined,
    ].filter((s) => s !== undefined);
    super(
      `no live member hosts kind '${kind}' (call to ${kind}/${identity}, ${Math.round(timeoutMs)} ms (timeoutMs), ${attempts} attempt(s))${seen.length > 0 ? `: ${seen.join('; ')}` : ''}`,
      options,
    );
    this.leaving = details.leaving;
    this.dropped = details.dropped;
    this.fencedAnswers = details.fencedAnswers;
    this.membershipUnavailable = details.membershipUnavailable;
    this.noMembers = details.noMembers === true;
  }
}

/**
 * A grain call needs another member (the grain's owner), and this caller has no transport to
 * reach it: a `Cluster` started without `remote` only reaches grains it hosts itself. Start it
 * with `remote: { host, port }`, or call from a `GranaryClient` (not a member). Never retried.
 */
export class NoTransportError extends ClusterError {
  static override readonly code = 'ERR_NO_TRANSPORT';
  override readonly name = 'NoTransportError';
  constructor(
    readonly kind: string,
    readonly identity: string,
    /** The owner the call would go to. */
    readonly owner: string,
  ) {
    super(
      `call to ${kind}/${identity} needs member ${owner}, and this caller has no transport: start the Cluster with \`remote: { host, port }\`, or call through a GranaryClient`,
    );
  }
}

registerErrorClasses(
  NoTransportError,
  ClusterError,
  JoinTimeoutError,
  NotJoinedError,
  LeaseLostError,
  ClusterStoppedError,
  GrainError,
  DeadlineExceededError,
  ActivationDeniedError,
  DeadlockError,
  CallChainTooLongError,
  NotOwnerError,
  JoinRefusedError,
  CallOutcomeUnknownError,
  TurnTimeoutError,
  MemberFencedError,
  NoHostError,
);

/**
 * The seed refused a seed-protocol request: malformed (a field of the wrong type, length or
 * range), or not the sender's to make (a join for another address, an operation on another
 * member's lease or claim). Nothing reached the membership table.
 */
export class SeedRequestRefusedError extends ClusterError {
  static override readonly code = 'ERR_SEED_REQUEST_REFUSED';
  override readonly name = 'SeedRequestRefusedError';
  constructor(reason: string) {
    super(`the seed refused the request: ${reason}`);
  }
}

registerErrorClasses(SeedRequestRefusedError);

/**
 * `GranaryClient.connect` learned no topology within its `requestTimeoutMs`: etcd or every
 * gateway unreachable, or refusing the client (a wrong `secret`). `cause` is the last attempt's
 * error; the message names the endpoints.
 */
export class ConnectTimeoutError extends ClusterError {
  static override readonly code = 'ERR_CONNECT_TIMEOUT';
  override readonly name = 'ConnectTimeoutError';
}

registerErrorClasses(ConnectTimeoutError);

/**
 * A record read from the membership store (an etcd member key or a note to this member), or the
 * topology a member answered a `GranaryClient` (gateways), is not well formed: not JSON, a field of the wrong type, length or range, or a member record whose id
 * is not its key's. A member record is left out of the topology (a malformed member must never
 * reach placement or be dialled), a note's bad items are ignored, a client refuses the topology
 * and asks the next member; logged (throttled) and counted.
 * Well-formed records are unaffected.
 */
export class MembershipRecordRejectedError extends ClusterError {
  static override readonly code = 'ERR_MEMBERSHIP_RECORD_REJECTED';
  override readonly name = 'MembershipRecordRejectedError';
  constructor(
    /** The store key of the record. */
    readonly key: string,
    /** What is wrong with it. */
    readonly reason: string,
    /** What was done with it. */
    outcome = 'ignored',
  ) {
    super(`membership record ${key} ${outcome}: ${reason}`);
  }
}

registerErrorClasses(MembershipRecordRejectedError);

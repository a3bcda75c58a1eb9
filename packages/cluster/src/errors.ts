/**
 * Errors of @granary/cluster. Every class has a fixed `name` and a stable `code` for matching;
 * messages name the option that controls the behaviour. Other parts of the package append their
 * classes at the end of this file.
 */

/** Base class of every error @granary/cluster throws. */
export class ClusterError extends Error {
  override name = 'ClusterError';
  readonly code: string = 'ERR_CLUSTER';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A cluster or provider option is invalid; `option` names it. Thrown at start, nothing joined. */
export class InvalidClusterOptionError extends ClusterError {
  override name = 'InvalidClusterOptionError';
  override readonly code = 'ERR_INVALID_CLUSTER_OPTION';
  constructor(
    readonly option: string,
    reason: string,
  ) {
    super(`invalid cluster option ${option}: ${reason}`);
  }
}

/** The provider could not register the member before `joinTimeoutMs` elapsed. */
export class JoinTimeoutError extends ClusterError {
  override name = 'JoinTimeoutError';
  override readonly code = 'ERR_JOIN_TIMEOUT';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A provider operation that needs membership was called before join() or after leave(). */
export class NotJoinedError extends ClusterError {
  override name = 'NotJoinedError';
  override readonly code = 'ERR_NOT_JOINED';
  constructor(operation: string) {
    super(`${operation} needs a joined member: call join() first`);
  }
}

/**
 * The member cannot prove its lease is alive (keep-alive failed, or none succeeded within the TTL
 * minus the safety margin): its claims are treated as gone until it re-registers.
 */
export class LeaseLostError extends ClusterError {
  override name = 'LeaseLostError';
  override readonly code = 'ERR_LEASE_LOST';
  constructor(operation: string, options?: { cause?: unknown }) {
    super(`${operation} refused: the member's lease is lost (it re-registers by itself)`, options);
  }
}

/** The cluster was shut down; the operation cannot run any more. */
export class ClusterStoppedError extends ClusterError {
  override name = 'ClusterStoppedError';
  override readonly code = 'ERR_CLUSTER_STOPPED';
  constructor(operation: string) {
    super(`${operation}: the cluster member has shut down`);
  }
}

/**
 * Code thrown by a grain (`receive` or `onActivate`), carried to the caller. `code` is the
 * original error's code (`ERR_GRAIN` if it had none), `originalName` its name. Never retried.
 */
export class GrainError extends ClusterError {
  override name = 'GrainError';
  override readonly code: string;
  constructor(
    readonly kind: string,
    readonly identity: string,
    readonly originalName: string,
    code: string | undefined,
    message: string,
  ) {
    super(message);
    this.code = code ?? 'ERR_GRAIN';
  }
}

/** A grain call did not get an answer before its deadline (`timeoutMs`), retries included. */
export class DeadlineExceededError extends ClusterError {
  override name = 'DeadlineExceededError';
  override readonly code = 'ERR_DEADLINE_EXCEEDED';
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
}

/** No member of the cluster hosts the kind (or the target member does not know it). No retry. */
export class UnknownKindError extends ClusterError {
  override name = 'UnknownKindError';
  override readonly code = 'ERR_UNKNOWN_KIND';
  constructor(readonly kind: string) {
    super(`unknown grain kind '${kind}': register it with kind() in Cluster.start({ kinds })`);
  }
}

/** The kind's `canActivate(identity)` refused the identity. No retry. */
export class ActivationDeniedError extends ClusterError {
  override name = 'ActivationDeniedError';
  override readonly code = 'ERR_ACTIVATION_DENIED';
  constructor(
    readonly kind: string,
    readonly identity: string,
  ) {
    super(`activation of ${kind}/${identity} denied by the kind's canActivate option`);
  }
}

/** A call would wait on a non-reentrant grain that is itself waiting in the same call chain. */
export class DeadlockError extends ClusterError {
  override name = 'DeadlockError';
  override readonly code = 'ERR_DEADLOCK';
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
 * The member asked does not hold the grain's shard; `owner` is the member it believes owns it.
 * Retried by the caller within the deadline; seen by users only as the cause of a deadline error.
 */
export class NotOwnerError extends ClusterError {
  override name = 'NotOwnerError';
  override readonly code = 'ERR_NOT_OWNER';
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
 * The cluster refused this member: another cluster name (or shared secret) at the seed. Not
 * retried: the configuration has to change.
 */
export class JoinRefusedError extends ClusterError {
  override name = 'JoinRefusedError';
  override readonly code = 'ERR_JOIN_REFUSED';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * A grain call was sent to its owner and the connection to that member broke before the reply
 * came back: the grain may or may not have handled it. Not retried, so a non-idempotent call is
 * never applied twice; pass `{ idempotent: true }` (GrainCallOptions.idempotent) to retry anyway.
 */
export class CallOutcomeUnknownError extends ClusterError {
  override name = 'CallOutcomeUnknownError';
  override readonly code = 'ERR_CALL_OUTCOME_UNKNOWN';
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

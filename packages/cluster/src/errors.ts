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

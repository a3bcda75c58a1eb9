/**
 * The parts of @granary/cluster generated code talks to, typed structurally so the runtime and
 * generated modules type-check against any cluster with these members (the real `Cluster`, or
 * an in-memory one in unit tests).
 */

/** Per-call options of a grain call. */
export interface CallOptions {
  /**
   * Deadline of one attempt, in milliseconds; past it the call fails with the cluster's
   * `DeadlineExceededError`.
   * @default the cluster's request timeout
   */
  timeoutMs?: number;
  /**
   * Aborts the call (and any retry wait) when signalled.
   * @default none
   */
  signal?: AbortSignal;
  /**
   * How many more attempts to make after a timeout, placement or transport failure. Errors
   * thrown by grain code are never retried. A retried call may run twice on the grain when the
   * first attempt timed out after the grain had handled it, so retry only idempotent methods.
   * @default 0
   */
  retries?: number;
}

/** Options passed through to `cluster.request`. */
export interface ClusterRequestOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** What a generated client needs from a cluster: `request` and `send` by kind and identity. */
export interface ClusterLike {
  request<T = unknown>(
    kind: string,
    identity: string,
    message: unknown,
    options?: ClusterRequestOptions,
  ): Promise<T>;
  send(kind: string, identity: string, message: unknown): void;
}

/** What the generated grain base class needs from a grain context. */
export interface InvokeContext {
  /** The message being handled. */
  readonly message: unknown;
  /** Replies to the requester of the current message. */
  respond(message: unknown): void;
}

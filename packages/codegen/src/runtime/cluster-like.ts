import type { GrainCallOptions } from '@granary/cluster';

/**
 * The parts of @granary/cluster generated code talks to, typed structurally so the runtime and
 * generated modules type-check against any cluster with these members (the real `Cluster`, or
 * an in-memory one in unit tests).
 */

/**
 * Per-call options of a generated client's rpc: the cluster's own `GrainCallOptions`
 * (`timeoutMs`, `signal`, `idempotent`, `retries`, and whatever else the cluster offers), passed
 * through to `cluster.request` / `ctx.request` as they are.
 */
export type CallOptions = GrainCallOptions;

/** @deprecated The options `ClusterLike.request` takes are the cluster's `GrainCallOptions`. */
export type ClusterRequestOptions = GrainCallOptions;

/** What a generated client needs from a cluster: `request` and `send` by kind and identity. */
export interface ClusterLike {
  request<T = unknown>(
    kind: string,
    identity: string,
    message: unknown,
    options?: GrainCallOptions,
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

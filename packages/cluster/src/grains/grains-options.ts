import type { ActorSystem } from '@granary/core';
import type { OverloadOptions } from '../overload/overload-options';

/** One line of the activation log (`onActivation`). */
export interface ActivationEvent {
  type: 'activate' | 'deactivate';
  kind: string;
  identity: string;
  activationId: string;
  /** The member hosting the activation. */
  member: string;
  /** Date.now() when onActivate started / onDeactivate finished. */
  at: number;
  /** Why it ended (deactivate only). */
  reason?: string;
}

/** Grain options of Cluster.start (next to the membership options). */
export interface GrainsOptions {
  /**
   * The actor system grains run in. Without one the cluster creates its own (and its Remote
   * when `remote` is given) and shuts them down with the cluster.
   * @default a new ActorSystem owned by the cluster
   */
  system?: ActorSystem;
  /**
   * Deadline of a grain call (retries included) when the call does not set `timeoutMs`; also
   * the deadline onActivate gets for loading state.
   * @default 5000
   */
  requestTimeoutMs?: number;
  /**
   * Called on every activation start and end (an activation log for tests and metrics).
   * @default undefined
   */
  onActivation?: ((event: ActivationEvent) => void) | undefined;
  /**
   * Bounds on the grain calls this member makes and serves, its load shedding and its retry
   * budget (see docs/overload.md).
   * @default DEFAULT_OVERLOAD_OPTIONS
   */
  overload?: OverloadOptions | undefined;
}

/** Defaults of GrainsOptions. */
export const DEFAULT_GRAINS_OPTIONS = {
  requestTimeoutMs: 5000,
} as const;

import type { Logger, PID } from '@granary/core';
import type { Activation } from '../activation';
import type { DeactivationReason, GrainCallOptions, GrainClusterHandle } from '../grain';

/** The call context a grain's outgoing calls inherit. */
export interface ParentCall {
  deadline: number;
  chainId: string;
  /** Non-reentrant grains waiting in the chain, 'kind/identity'. */
  path: readonly string[];
}

/** What an activation's actor needs from the member's grain runtime. */
export interface GrainHost {
  readonly cluster: GrainClusterHandle;
  readonly logger: Logger;
  /** Deadline given to onActivate (ms). */
  readonly activationTimeoutMs: number;
  canServe(kind: string, shard: number): boolean;
  epochOf(kind: string, shard: number): number;
  /** Sends a reply (or control reply) to a caller; a missing sender drops it. */
  reply(to: PID | undefined, message: unknown): void;
  /** Replies NotOwner with the owner this member believes in. */
  replyNotOwner(to: PID | undefined, kind: string, shard: number): void;
  /** A turn finished; `influencing`: it counts as activity for the idle timer. */
  turnEnded(a: Activation, influencing: boolean): void;
  requestDeactivate(a: Activation, reason: DeactivationReason): void;
  /** onDeactivate ran: the activation is over. */
  ended(a: Activation): void;
  call<T>(
    kind: string,
    identity: string,
    message: unknown,
    options: GrainCallOptions | undefined,
    parent: ParentCall,
  ): Promise<T>;
  send(kind: string, identity: string, message: unknown, parent: ParentCall, sender?: PID): void;
  /** Activation log hook (tests, metrics). */
  activated(a: Activation): void;
  deactivated(a: Activation, reason: DeactivationReason): void;
}

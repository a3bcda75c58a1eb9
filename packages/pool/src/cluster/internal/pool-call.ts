import type { GrainCallOptions, GrainClusterHandle } from '@granary/cluster';

/** What a worker call goes through: a member, a GranaryClient, or a calling grain's context. */
export type WorkerCaller = Pick<GrainClusterHandle, 'request' | 'send'>;

/**
 * The PoolClient methods that call a worker through a given caller. Keyed by symbols so they
 * stay off the public API: only GrainPoolClient (a grain's calls, with its deadline and call
 * chain) uses them.
 */
export const REQUEST_VIA: unique symbol = Symbol('PoolClient.requestVia');
export const SEND_VIA: unique symbol = Symbol('PoolClient.sendVia');

/** A PoolClient as GrainPoolClient sees it. */
export interface PoolRouting {
  readonly name: string;
  [REQUEST_VIA]<T>(via: WorkerCaller, message: unknown, options?: GrainCallOptions): Promise<T>;
  [SEND_VIA](via: WorkerCaller, message: unknown): Promise<void>;
}

import type { GrainCallOptions, GrainContext } from '@granary/cluster';
import { REQUEST_VIA, SEND_VIA, type PoolRouting } from './internal/pool-call';

/**
 * A cluster pool called from inside a grain (`PoolClient.get(ctx, name)`): the member's own
 * pool client places and picks the worker (one placement and one set of counters per member),
 * and each call goes through the grain's context, so it carries the grain's deadline (never
 * past it) and its call chain, as `ctx.request` does. Made per turn; it holds nothing.
 *
 * @example
 * class Cart implements Grain {
 *   async receive(ctx: GrainContext) {
 *     const price = await PoolClient.get(ctx, 'pricer').request({ sku: 'a-1' });
 *     return price;
 *   }
 * }
 */
export class GrainPoolClient {
  constructor(
    private readonly pool: PoolRouting,
    private readonly ctx: GrainContext,
  ) {}

  /** The pool's name. */
  get name(): string {
    return this.pool.name;
  }

  /**
   * Sends `message` to the least busy worker and resolves with its reply (see
   * `PoolClient.request`); the call is the grain's own (`ctx.request`).
   */
  request<T = unknown>(message: unknown, options?: GrainCallOptions): Promise<T> {
    return this.pool[REQUEST_VIA]<T>(this.ctx, message, options);
  }

  /** Sends `message` to the least busy worker without a reply (`ctx.send`). */
  send(message: unknown): Promise<void> {
    return this.pool[SEND_VIA](this.ctx, message);
  }
}

import type { PID, RequestOptions, SenderContext } from '@granary/core';
import type { PoolInspection } from './pool-behavior';

/**
 * Header that puts a request in the pool's urgent lane. Core's `request` has no priority
 * option (only `send` has), so an urgent request says so in a header the pool reads.
 */
export const POOL_PRIORITY_HEADER = 'granary-priority';

/** Built-in urgent request: the pool answers with its {@link PoolInspection} itself. */
export class InspectPool {}

/**
 * An urgent request to a pool: handled by the pool's own `handleCall`, never forwarded to a
 * worker (ergo's act.Pool `CallWithPriority(..., High)`).
 *
 * @example
 * const stats = await requestUrgent<Stats>(system.root, poolPid, new GetStats(), { timeoutMs: 1000 });
 */
export function requestUrgent<T = unknown>(
  sender: SenderContext,
  pool: PID,
  message: unknown,
  options: RequestOptions = {},
): Promise<T> {
  const header = { ...options.header, [POOL_PRIORITY_HEADER]: 'urgent' };
  return sender.request<T>(pool, message, { ...options, header });
}

/**
 * The pool's statistics (pool_size, worker_behavior, worker_mailbox_size, worker_restarts,
 * messages_forwarded, messages_unhandled, ...), asked as an urgent request.
 *
 * @example
 * const { messages_unhandled } = await inspectPool(system.root, poolPid);
 */
export function inspectPool(
  sender: SenderContext,
  pool: PID,
  options?: RequestOptions,
): Promise<PoolInspection> {
  return requestUrgent<PoolInspection>(sender, pool, new InspectPool(), options);
}

/**
 * What travels between a PoolClient and a cluster pool's grains. Plain JSON objects, so they
 * cross members through the default serializer; the `$granaryPool` key keeps them apart from
 * user messages.
 */

/** The grain kind a member hosts for pool `name`: only that member hosts it. */
export function memberKind(name: string, memberId: string): string {
  return `${name}@${memberId}`;
}

/** Identity of the per-member inventory grain (worker identities are `0`..`size-1`). */
export const INVENTORY_ID = '$inventory';

/** A control message to a worker or to the inventory grain. */
export interface PoolControl {
  $granaryPool: 'inventory' | 'ping' | 'retire' | 'stats' | 'resize';
  size?: number;
  /** When the size was set (resize): the newest setting wins on every member. */
  sizeAt?: number | undefined;
}

/** What a member's inventory grain answers. */
export interface Inventory {
  size: number;
  /** When `size` was set (0: the poolKind's own size). */
  sizeAt: number;
  maxPerNode: number;
  maxInFlight: number;
  /** Worker indices with a live activation on this member. */
  workers: number[];
}

/** What a worker answers to `stats`. */
export interface WorkerStats {
  index: number;
  member: string;
  activationId: string;
  /** User messages handled by this activation. */
  calls: number;
  /** Of those, how many threw. */
  errors: number;
}

export function control(
  kind: PoolControl['$granaryPool'],
  size?: number,
  sizeAt?: number,
): PoolControl {
  return size === undefined ? { $granaryPool: kind } : { $granaryPool: kind, size, sizeAt };
}

export function isControl(message: unknown): message is PoolControl {
  return (
    typeof message === 'object' &&
    message !== null &&
    typeof (message as PoolControl).$granaryPool === 'string'
  );
}

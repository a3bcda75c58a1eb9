/** Options and results of PoolClient (pool-client.ts). */
import { InvalidOptionError } from '@granary/core';
import type { WorkerStats } from './internal/pool-protocol';

/** Options of {@link PoolClient.get}. */
export interface PoolClientOptions {
  /**
   * Deadline of the client's own calls (inventories, activations, stats), in ms.
   * @default 5000
   */
  controlTimeoutMs?: number;
  /**
   * How old a placement may get, in ms, before a call through this client (not waiting for it)
   * reads the members' inventories again and ends the worker copies beyond it. A call through
   * an older placement (another client's, not yet moved to the newest topology) starts a worker
   * again where it was retired, and nothing else would end that copy until the next topology
   * change. `Infinity` turns this off.
   * @default 10000
   */
  auditIntervalMs?: number;
}

/** Defaults of {@link PoolClientOptions}. */
export const DEFAULT_POOL_CLIENT_OPTIONS = {
  controlTimeoutMs: 5000,
  auditIntervalMs: 10_000,
} as const;

/** Every option PoolClient.get knows (the compiler keeps it in step with PoolClientOptions). */
export const POOL_CLIENT_OPTION_KEYS = {
  controlTimeoutMs: true,
  auditIntervalMs: true,
} as const satisfies Record<keyof PoolClientOptions, true>;

/** PoolClient.get's options over their defaults, checked. */
export function resolvePoolClientOptions(options: PoolClientOptions): Required<PoolClientOptions> {
  const o = { ...DEFAULT_POOL_CLIENT_OPTIONS, ...options };
  if (!(o.auditIntervalMs > 0)) {
    throw new InvalidOptionError(
      'auditIntervalMs',
      `must be > 0 (Infinity: never), got ${o.auditIntervalMs}`,
    );
  }
  return o;
}

/** Per worker and total statistics of a cluster pool. */
export interface ClusterPoolStats {
  workers: WorkerStats[];
  /** Calls handled by all current activations. */
  calls: number;
  errors: number;
  /** Members running workers → how many. */
  perMember: Record<string, number>;
}

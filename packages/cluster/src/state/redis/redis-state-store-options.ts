import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { NOOP_LOGGER, type ClusterLogger } from '../../internal/logger';

/** Options of {@link RedisStateStore}. Give `url` or `client`, not both. */
export interface RedisStateStoreOptions {
  /**
   * Redis URL of the client the store creates (and closes in `close()`).
   * @default 'redis://127.0.0.1:6379'
   */
  url?: string;
  /**
   * An existing ioredis client: a `Redis` (plain or Sentinel) or a `Cluster`, configured with
   * ioredis' own options. The store never closes it. Give it `enableOfflineQueue: false` and
   * `autoResendUnfulfilledCommands: false` so a timed-out write is never replayed later; the
   * store bounds each call by `commandTimeoutMs` in any case.
   * @default undefined (the store creates a client from `url`)
   */
  client?: Redis | Cluster;
  /**
   * Prefix of every state key; the key is `<prefix>{<kind>/<id>}` (a hash tag, so on Redis
   * Cluster everything of one grain is in one slot).
   * @default 'granary:state:'
   */
  keyPrefix?: string;
  /**
   * Longest wait for one operation, including waiting for a (re)connection, before it fails
   * with StateUnavailableError.
   * @default 2000
   */
  commandTimeoutMs?: number;
  /**
   * How long the tombstone of a cleared grain is kept, in ms. The tombstone carries the epoch
   * that fences stale writers, so expire it only well after any stale owner can still be alive.
   * `null` keeps it forever.
   * @default null
   */
  tombstoneTtlMs?: number | null;
  /**
   * Most writes sent to Redis in one script call. Writes of different grains issued in the same
   * event-loop turn are coalesced (each still checked and applied on its own), which cuts the
   * Redis CPU and the syscalls per write several-fold under load. 1 sends every write alone.
   * Batching needs all keys of a call on one Redis node, so a Redis Cluster client always sends
   * writes alone (give it ioredis' `enableAutoPipelining` to coalesce them per node instead).
   * @default 128
   */
  writeBatchSize?: number;
  /**
   * Extra ioredis options for the client created from `url` (TLS, password, ...). The store
   * overrides the ones that make calls fail fast: `enableOfflineQueue`, `maxRetriesPerRequest`,
   * `autoResendUnfulfilledCommands`, `commandTimeout`.
   * @default {}
   */
  redisOptions?: RedisOptions;
  /**
   * Where the store reports losing and regaining Redis (once per outage, not per retry).
   * @default a logger that drops everything
   */
  logger?: ClusterLogger;
}

/** Defaults of {@link RedisStateStoreOptions}. */
export const DEFAULT_REDIS_STATE_STORE_OPTIONS = {
  url: 'redis://127.0.0.1:6379',
  keyPrefix: 'granary:state:',
  commandTimeoutMs: 2000,
  tombstoneTtlMs: null as number | null,
  writeBatchSize: 128,
  redisOptions: {} as RedisOptions,
  logger: NOOP_LOGGER,
};

/**
 * Delay between reconnection attempts of the store's own client: grows 50 ms per attempt up to
 * 1 s, so a restarted Redis is found within a second without hammering a dead one.
 */
export function reconnectDelayMs(attempt: number): number {
  return Math.min(attempt * 50, 1000);
}

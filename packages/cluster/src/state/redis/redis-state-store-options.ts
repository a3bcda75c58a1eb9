import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { rejectUnknownOptions, withoutUndefined } from '@granary/core/internal';
import { REDIS_CONNECTION_OPTIONS } from '../../internal/redis-connection-options';
import type { ClusterLogger } from '../../internal/logger';
import { DURABILITY_LEVELS, type Durability, type StateLostPolicy } from '../durability';
import { InvalidOptionError } from '@granary/core';
import type { ServerPersistence } from './server-facts';

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
   * What an acknowledged write survives (docs/durability.md): `'restart'` a Redis crash or
   * restart (needs `appendonly yes` with `appendfsync always` or `no`), `'fsync'` a host crash (`appendfsync always`, or WAITAOF
   * per batch on Redis 7.2+), `'replicated'` the loss of the primary (WAIT `replicas` per
   * batch). `'none'` checks nothing: say it where losing acknowledged writes is acceptable.
   * Checked by open() (Cluster.start opens the stores in `stateStores`) and again on every
   * reconnection; a server that cannot give it fails with StateDurabilityError naming the
   * setting.
   * @default 'restart'
   */
  durability?: Durability;
  /**
   * Replicas that must acknowledge each write batch with durability `'replicated'` (Redis
   * `WAIT`), and that must be online at the primary when the store opens.
   * @default 1
   */
  replicas?: number;
  /**
   * Longest wait for the replicas (`WAIT`) or the fsync (`WAITAOF`) of one write batch; past
   * it the batch's writes fail with StateUnavailableError (stored on the primary, durability
   * unknown). Below `commandTimeoutMs`, so Redis answers before the client gives up.
   * @default half of commandTimeoutMs, at most 1000
   */
  durabilityTimeoutMs?: number;
  /**
   * How the server persists, for a Redis that refuses CONFIG GET (managed services): the
   * durability check uses it instead of asking. Declare what your provider guarantees.
   * @default undefined (ask the server with CONFIG GET)
   */
  serverPersistence?: ServerPersistence;
  /**
   * Per kind, what happens to a grain whose stored state was found older than acknowledged:
   * `'refuse'` it until an operator calls acceptStateLoss(), or `'accept'` it (logged, counted,
   * the grain carries on from what the store holds). Kinds not listed refuse.
   * @default {} (every kind refuses)
   */
  stateLostPolicy?: Readonly<Record<string, StateLostPolicy>>;
  /**
   * Largest state of one grain, in bytes. A write of a larger one fails with
   * StateTooLargeError before it is sent (nothing written), and a larger one found stored (put
   * under the grain's key by another program) fails the grain's activation with it without
   * being read into memory. Redis itself takes up to 512 MB per value.
   * @default 64 MiB (67108864)
   */
  maxStateBytes?: number;
  /**
   * Extra ioredis options for the client created from `url` (TLS, password, Sentinel:
   * `{ sentinels: [{ host, port }], name: 'mymaster' }`, which makes ioredis ask Sentinel for
   * the primary and follow a failover). The store
   * overrides the ones that make calls fail fast: `enableOfflineQueue`, `maxRetriesPerRequest`,
   * `autoResendUnfulfilledCommands`, `commandTimeout`. Its defaults for `retryStrategy`
   * (reconnect after 50 ms more per attempt, at most 1 s) and `maxLoadingRetryTime` (200 ms: a
   * restarted Redis still loading its data is asked again that often) can be set here.
   * @default {}
   */
  redisOptions?: RedisOptions;
  /**
   * Where the store reports losing and regaining Redis (once per outage, not per retry), a
   * durability check that fails after a reconnection, and lost state (error level, once per
   * grain).
   * @default the logger of the first member whose grains use the store (`{ component: 'state' }`)
   */
  logger?: ClusterLogger;
}

/** Every option RedisStateStore knows (the compiler keeps it in step). */
const STATE_STORE_OPTION_KEYS = {
  url: true,
  client: true,
  keyPrefix: true,
  commandTimeoutMs: true,
  tombstoneTtlMs: true,
  writeBatchSize: true,
  durability: true,
  replicas: true,
  durabilityTimeoutMs: true,
  serverPersistence: true,
  stateLostPolicy: true,
  maxStateBytes: true,
  redisOptions: true,
  logger: true,
} as const satisfies Record<keyof RedisStateStoreOptions, true>;

/** Defaults of {@link RedisStateStoreOptions}. */
export const DEFAULT_REDIS_STATE_STORE_OPTIONS = {
  url: 'redis://127.0.0.1:6379',
  keyPrefix: 'granary:state:',
  commandTimeoutMs: 2000,
  tombstoneTtlMs: null as number | null,
  writeBatchSize: 128,
  durability: 'restart' as Durability,
  replicas: 1,
  durabilityTimeoutMs: undefined as number | undefined,
  serverPersistence: undefined as ServerPersistence | undefined,
  stateLostPolicy: {} as Readonly<Record<string, StateLostPolicy>>,
  maxStateBytes: 64 * 1024 * 1024,
  redisOptions: {} as RedisOptions,
};

/**
 * Delay between reconnection attempts of the store's own client: grows 50 ms per attempt up to
 * 1 s, so a restarted Redis is found within a second without hammering a dead one.
 */
export function reconnectDelayMs(attempt: number): number {
  return Math.min(attempt * 50, 1000);
}

/**
 * How long the store's own client waits before asking again whether a Redis that answered
 * "loading" (a restart reading its append-only file) is ready. ioredis waits the server's own
 * `loading_eta_seconds` (at least 1 s, up to 10 s), an estimate made early in the load that can
 * be far too long: the chaos test saw every call fail for 7 s after a Redis restart whose load
 * took well under 1 s. An INFO every 200 ms while Redis loads costs nothing.
 */
export const LOADING_RECHECK_MS = 200;

/** The options with defaults applied, checked. */
export type ResolvedStoreOptions = typeof DEFAULT_REDIS_STATE_STORE_OPTIONS &
  Omit<RedisStateStoreOptions, keyof typeof DEFAULT_REDIS_STATE_STORE_OPTIONS> & {
    durabilityTimeoutMs: number;
  };

/**
 * Applies the defaults and checks every option.
 * @throws InvalidOptionError naming the option.
 */
export function resolveStoreOptions(options: RedisStateStoreOptions): ResolvedStoreOptions {
  rejectUnknownOptions(
    'RedisStateStore',
    options,
    STATE_STORE_OPTION_KEYS,
    REDIS_CONNECTION_OPTIONS,
  );
  if (options.url !== undefined && options.client !== undefined) {
    throw new InvalidOptionError('client', 'RedisStateStore takes either url or client, not both');
  }
  const o = { ...DEFAULT_REDIS_STATE_STORE_OPTIONS, ...withoutUndefined(options) };
  const bad = (option: string, rule: string, value: unknown): InvalidOptionError =>
    new InvalidOptionError(option, `must be ${rule}, got ${String(value)}`);
  if (typeof o.keyPrefix !== 'string') throw bad('keyPrefix', 'a string', o.keyPrefix);
  if (!Number.isFinite(o.commandTimeoutMs) || o.commandTimeoutMs <= 0) {
    throw bad('commandTimeoutMs', 'a positive number', o.commandTimeoutMs);
  }
  const ttl = o.tombstoneTtlMs;
  if (ttl !== null && !(Number.isSafeInteger(ttl) && ttl > 0)) {
    throw bad('tombstoneTtlMs', 'null or a positive integer', ttl);
  }
  if (!(Number.isSafeInteger(o.writeBatchSize) && o.writeBatchSize >= 1)) {
    throw bad('writeBatchSize', 'a positive integer', o.writeBatchSize);
  }
  if (!DURABILITY_LEVELS.includes(o.durability)) {
    throw bad(
      'durability',
      `one of ${DURABILITY_LEVELS.map((l) => `'${l}'`).join(', ')}`,
      o.durability,
    );
  }
  if (!(Number.isSafeInteger(o.replicas) && o.replicas >= 1)) {
    throw bad('replicas', 'a positive integer', o.replicas);
  }
  const wait =
    o.durabilityTimeoutMs ??
    Math.min(MAX_DURABILITY_TIMEOUT_MS, Math.floor(o.commandTimeoutMs / 2));
  if (!(Number.isSafeInteger(wait) && wait > 0 && wait < o.commandTimeoutMs)) {
    throw bad(
      'durabilityTimeoutMs',
      `a positive integer below commandTimeoutMs (${o.commandTimeoutMs})`,
      wait,
    );
  }
  if (!(Number.isSafeInteger(o.maxStateBytes) && o.maxStateBytes >= 1)) {
    throw bad('maxStateBytes', 'a positive integer', o.maxStateBytes);
  }
  for (const [kind, policy] of Object.entries(o.stateLostPolicy)) {
    if (policy !== 'refuse' && policy !== 'accept') {
      throw bad(`stateLostPolicy['${kind}']`, "'refuse' or 'accept'", policy);
    }
  }
  return { ...o, durabilityTimeoutMs: wait };
}

/** The default durabilityTimeoutMs' ceiling: a replica that lags a second is as good as gone. */
const MAX_DURABILITY_TIMEOUT_MS = 1000;

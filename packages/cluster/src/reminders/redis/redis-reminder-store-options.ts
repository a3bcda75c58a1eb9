import { InvalidOptionError } from '@granary/core';
import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { rejectUnknownOptions, withoutUndefined } from '@granary/core/internal';
import { REDIS_CONNECTION_OPTIONS } from '../../internal/redis-connection-options';
import type { ClusterLogger } from '../../internal/logger';
import { DURABILITY_LEVELS, type Durability } from '../../state/durability';
import type { ServerPersistence } from '../../state/redis/server-facts';

/** Options of RedisReminderStore. Give `url` or `client`, not both. */
export interface RedisReminderStoreOptions {
  /**
   * Redis URL of the client the store creates (and closes in `close()`).
   * @default 'redis://127.0.0.1:6379'
   */
  url?: string;
  /**
   * An existing ioredis client (plain, Sentinel or Cluster); the store never closes it. Give it
   * `enableOfflineQueue: false` so a timed-out claim is never replayed later.
   * @default undefined
   */
  client?: Redis | Cluster;
  /**
   * Prefix of every key; a shard's keys are `<prefix>{<kind>/<shard>}...` (one hash tag per
   * shard, so Redis Cluster works and a shard's scripts touch one slot).
   * @default 'granary:reminders:'
   */
  keyPrefix?: string;
  /**
   * Longest wait for one operation before it fails with ReminderStoreUnavailableError.
   * @default 2000
   */
  commandTimeoutMs?: number;
  /**
   * What an acknowledged reminder write (a `set`, a tick's claim) survives, as for
   * RedisStateStore (docs/durability.md): `'restart'` a Redis crash or restart (needs
   * `appendonly yes`), `'fsync'` a host crash (`appendfsync always`, or WAITAOF per claim batch
   * on Redis 7.2+), `'replicated'` the loss of the primary (WAIT `replicas` per claim batch).
   * `'none'` checks nothing: a Redis restarted without persistence then forgets every reminder,
   * and forgets which ticks were claimed (a tick may fire twice). Checked by open()
   * (Cluster.start opens the reminders' store before the member joins) and again on every
   * reconnection; a server that cannot give it fails with StateDurabilityError naming the
   * setting.
   * @default 'restart'
   */
  durability?: Durability;
  /**
   * Replicas that must acknowledge each write with durability `'replicated'` (Redis `WAIT`),
   * and that must be online at the primary when the store opens.
   * @default 1
   */
  replicas?: number;
  /**
   * Longest wait for the replicas (`WAIT`) or the fsync (`WAITAOF`) of one write; past it the
   * write fails with ReminderStoreUnavailableError (stored on the primary, durability unknown:
   * a claim is then not fired). Below `commandTimeoutMs`.
   * @default half of commandTimeoutMs, at most 1000
   */
  durabilityTimeoutMs?: number;
  /**
   * How the server persists, for a Redis that refuses CONFIG GET (managed services): the
   * durability check uses it instead of asking.
   * @default undefined (ask the server with CONFIG GET)
   */
  serverPersistence?: ServerPersistence;
  /** Extra ioredis options for the client created from `url`. @default {} */
  redisOptions?: RedisOptions;
  /**
   * Where the store reports a durability check that fails after a reconnection.
   * @default the logger of the member that opens the store (`{ component: 'reminders' }`)
   */
  logger?: ClusterLogger;
}

/** Defaults of {@link RedisReminderStoreOptions}. */
export const DEFAULT_REDIS_REMINDER_STORE_OPTIONS = {
  url: 'redis://127.0.0.1:6379',
  keyPrefix: 'granary:reminders:',
  commandTimeoutMs: 2000,
  durability: 'restart' as Durability,
  replicas: 1,
  redisOptions: {} as RedisOptions,
};

/** The options with defaults applied, checked. */
export type ResolvedReminderStoreOptions = typeof DEFAULT_REDIS_REMINDER_STORE_OPTIONS &
  Omit<RedisReminderStoreOptions, keyof typeof DEFAULT_REDIS_REMINDER_STORE_OPTIONS> & {
    durabilityTimeoutMs: number;
  };

/** Every option RedisReminderStore knows (the compiler keeps it in step). */
const REMINDER_STORE_OPTION_KEYS = {
  url: true,
  client: true,
  keyPrefix: true,
  commandTimeoutMs: true,
  durability: true,
  replicas: true,
  durabilityTimeoutMs: true,
  serverPersistence: true,
  redisOptions: true,
  logger: true,
} as const satisfies Record<keyof RedisReminderStoreOptions, true>;

/**
 * Applies the defaults and checks every option.
 * @throws InvalidOptionError naming the option.
 */
export function resolveReminderStoreOptions(
  options: RedisReminderStoreOptions,
): ResolvedReminderStoreOptions {
  rejectUnknownOptions(
    'RedisReminderStore',
    options,
    REMINDER_STORE_OPTION_KEYS,
    REDIS_CONNECTION_OPTIONS,
  );
  if (options.url !== undefined && options.client !== undefined) {
    throw new InvalidOptionError('client', 'RedisReminderStore takes url or client, not both');
  }
  const o = { ...DEFAULT_REDIS_REMINDER_STORE_OPTIONS, ...withoutUndefined(options) };
  const bad = (option: string, rule: string, value: unknown): InvalidOptionError =>
    new InvalidOptionError(option, `must be ${rule}, got ${String(value)}`);
  if (typeof o.keyPrefix !== 'string') throw bad('keyPrefix', 'a string', o.keyPrefix);
  if (!(o.commandTimeoutMs > 0)) throw bad('commandTimeoutMs', '> 0', o.commandTimeoutMs);
  if (!DURABILITY_LEVELS.includes(o.durability)) {
    const levels = DURABILITY_LEVELS.map((l) => `'${l}'`).join(', ');
    throw bad('durability', `one of ${levels}`, o.durability);
  }
  if (!(Number.isSafeInteger(o.replicas) && o.replicas >= 1)) {
    throw bad('replicas', 'a positive integer', o.replicas);
  }
  const wait = o.durabilityTimeoutMs ?? Math.min(1000, Math.floor(o.commandTimeoutMs / 2));
  if (!(Number.isSafeInteger(wait) && wait > 0 && wait < o.commandTimeoutMs)) {
    throw bad(
      'durabilityTimeoutMs',
      `a positive integer below commandTimeoutMs (${o.commandTimeoutMs})`,
      wait,
    );
  }
  return { ...o, durabilityTimeoutMs: wait };
}

import { InvalidOptionError } from '@granary/core';
import type { IOptions } from 'etcd3';
import { rejectUnknownOptions, withoutUndefined } from '@granary/core/internal';
import type { ClusterLogger } from '../../internal/logger';

/** Options of EtcdProvider. */
export interface EtcdProviderOptions {
  /** etcd client URLs, e.g. `['http://127.0.0.1:2379']`. Required. */
  endpoints: string[];
  /**
   * Key prefix; keys are `<prefix>/<cluster>/members/<id>` and `<prefix>/<cluster>/shards/<kind>/<n>`.
   * @default '/granary'
   */
  prefix?: string;
  /**
   * Lease TTL in whole seconds: a dead member's key and claims vanish this long after its last
   * keep-alive (SIGKILL to failover: about TTL + 0.5 s). At least 2, etcd's minimum with its
   * default election timeout. With the defaults a member rides out `ttlSeconds * 1000 -
   * safetyMarginMs - keepAliveIntervalMs` = 4 s of etcd being unable to answer keep-alives (an
   * etcd leader election takes 1-2 s, and a keep-alive is answered within about 0.3 s of the new
   * leader): see the cluster README.
   * @default 5
   */
  ttlSeconds?: number;
  /**
   * Interval between keep-alives (sent from the lease thread, off the main event loop); must
   * leave room for a missed one inside the TTL. Every keep-alive is a cheap request to etcd (no
   * raft round); the interval is taken whole out of the trouble a member rides out. A longer one
   * makes the SIGKILL failover sooner by half of it on average (a lease ends TTL after the last
   * keep-alive etcd received).
   * @default 500 at every TTL (at most half of `ttlSeconds * 1000 - safetyMarginMs`)
   */
  keepAliveIntervalMs?: number;
  /**
   * The member fences itself this long before its lease could expire in etcd (time since the send
   * of the last answered keep-alive >= TTL - margin): covers clock rate drift between this host
   * and the etcd leader (ppm), a turn that started just before the deadline, and a keep-alive
   * answered by a deposed etcd leader (etcd extends every lease by its election timeout when a
   * new leader takes over, which covers that).
   * @default 500
   */
  safetyMarginMs?: number;
  /**
   * Deadline of each etcd request (claim, release, registration). A keep-alive unanswered this
   * long moves the lease thread's stream to the next endpoint; once nothing at all has been
   * answered for this long, a keep-alive unanswered after a quarter of it moves on.
   * @default 1000
   */
  requestTimeoutMs?: number;
  /**
   * The lease is kept alive off the main event loop, but only while the main loop answers within
   * this long: a loop blocked longer (a hung process, an endless synchronous turn) stops the
   * keep-alives and revokes the lease, so the member fences itself and survivors take over; it
   * rejoins once its loop runs again. Well above a long GC pause or a long turn (a 3 s turn fences
   * nothing), well below "dead".
   * @default 10000
   */
  maxLoopStallMs?: number;
  /**
   * How long join() retries (with backoff) while etcd answers none of its steps before it throws
   * JoinTimeoutError. Each step etcd answers (the lease granted, the member key written) gives the
   * next one this long again, so a slow but working etcd (a join storm) does not fail a join; each
   * retried request waits longer for its answer (requestTimeoutMs doubled per failure, up to 4 x).
   * @default 10000
   */
  joinTimeoutMs?: number;
  /**
   * etcd history older than this is compacted away (by one member of the cluster, every this
   * long, to the revision of one interval ago), so years of deploys never fill etcd's quota. 0
   * turns it off: then run etcd with `--auto-compaction-mode=periodic
   * --auto-compaction-retention=5m` (compaction is cluster-wide: turn it off here if other
   * applications on the same etcd need older history).
   * @default 300000
   */
  historyRetentionMs?: number;
  /**
   * Logger (pino-compatible).
   * @default a logger that drops everything
   */
  logger?: ClusterLogger;
  /**
   * Extra etcd3 client options (credentials, auth, grpcOptions); `hosts` comes from `endpoints`.
   * @default {}
   */
  etcd?: Omit<IOptions, 'hosts'>;
}

/** Defaults of EtcdProviderOptions (the keep-alive interval and margin derive from the TTL). */
export const DEFAULT_ETCD_PROVIDER_OPTIONS = {
  prefix: '/granary',
  ttlSeconds: 5,
  keepAliveIntervalMs: 500,
  safetyMarginMs: 500,
  requestTimeoutMs: 1000,
  joinTimeoutMs: 10_000,
  maxLoopStallMs: 10_000,
  historyRetentionMs: 300_000,
} as const;

/** maxLoopStallMs below this would fence on an ordinary busy moment (and the heartbeat is 100 ms). */
const MIN_MAX_LOOP_STALL_MS = 500;

/** etcd raises shorter TTLs to ceil(1.5 x election timeout) = 2 s with its default settings. */
export const MIN_ETCD_TTL_SECONDS = 2;
/** etcd's MaxLeaseTTL. */
const MAX_ETCD_TTL_SECONDS = 9_000_000_000;

/**
 * Every option EtcdProvider knows (the compiler keeps it in step): one under another name
 * (etcd3's `hosts`, `ttl`) was ignored and its default ran.
 */
export const ETCD_PROVIDER_OPTION_KEYS = {
  endpoints: true,
  prefix: true,
  ttlSeconds: true,
  keepAliveIntervalMs: true,
  safetyMarginMs: true,
  requestTimeoutMs: true,
  maxLoopStallMs: true,
  joinTimeoutMs: true,
  historyRetentionMs: true,
  logger: true,
  etcd: true,
} as const satisfies Record<keyof EtcdProviderOptions, true>;

/** EtcdProviderOptions with every default applied and checked. */
export type ResolvedEtcdProviderOptions = Required<Omit<EtcdProviderOptions, 'logger' | 'etcd'>> &
  Pick<EtcdProviderOptions, 'logger' | 'etcd'>;

/** Applies the defaults and validates; throws InvalidOptionError naming the option. */
export function resolveEtcdProviderOptions(
  options: EtcdProviderOptions,
): ResolvedEtcdProviderOptions {
  if (options !== null && typeof options === 'object') {
    rejectUnknownOptions('EtcdProvider', options, ETCD_PROVIDER_OPTION_KEYS);
  }
  const endpoints = options?.endpoints;
  if (!Array.isArray(endpoints) || endpoints.length === 0) {
    throw new InvalidOptionError('endpoints', 'at least one etcd endpoint URL is required');
  }
  for (const e of endpoints) {
    if (typeof e !== 'string' || !/^(https?:\/\/)?[^/\s:]+(:\d+)?\/?$/.test(e)) {
      throw new InvalidOptionError('endpoints', `not an etcd endpoint URL: ${JSON.stringify(e)}`);
    }
  }
  const merged = { ...DEFAULT_ETCD_PROVIDER_OPTIONS, ...withoutUndefined(options) };
  const { ttlSeconds } = merged;
  if (
    !Number.isInteger(ttlSeconds) ||
    ttlSeconds < MIN_ETCD_TTL_SECONDS ||
    ttlSeconds > MAX_ETCD_TTL_SECONDS
  ) {
    throw new InvalidOptionError(
      'ttlSeconds',
      `must be a whole number of seconds >= ${MIN_ETCD_TTL_SECONDS} (etcd raises shorter leases), got ${ttlSeconds}`,
    );
  }
  const ttlMs = ttlSeconds * 1000;
  // The default margin, chosen for the default TTL, shrinks with a shorter one.
  const scale = Math.min(1, ttlMs / (DEFAULT_ETCD_PROVIDER_OPTIONS.ttlSeconds * 1000));
  const safetyMarginMs =
    options.safetyMarginMs ?? DEFAULT_ETCD_PROVIDER_OPTIONS.safetyMarginMs * scale;
  if (!(safetyMarginMs >= 0 && safetyMarginMs < ttlMs)) {
    throw new InvalidOptionError(
      'safetyMarginMs',
      `must be in [0, ttlSeconds * 1000), got ${safetyMarginMs}`,
    );
  }
  // The interval is not scaled: 500 ms fits every TTL from etcd's minimum of 2 s, and one
  // chosen for a short TTL is one for a fast failover. Scaled (200 ms at TTL 2) it bought 0.3 s
  // of ride-out, less than an etcd election takes anyway, and cost 0.15 s of failover on average
  // (grains-failover: 2.26 s against 2.09 s, 6 and 4 runs).
  const keepAliveIntervalMs =
    options.keepAliveIntervalMs ??
    Math.min(DEFAULT_ETCD_PROVIDER_OPTIONS.keepAliveIntervalMs, (ttlMs - safetyMarginMs) / 2);
  if (!(keepAliveIntervalMs > 0 && keepAliveIntervalMs * 2 <= ttlMs - safetyMarginMs)) {
    throw new InvalidOptionError(
      'keepAliveIntervalMs',
      `must be > 0 and at most half of ttlSeconds * 1000 - safetyMarginMs (${ttlMs - safetyMarginMs}), got ${keepAliveIntervalMs}`,
    );
  }
  if (!(Number.isFinite(merged.maxLoopStallMs) && merged.maxLoopStallMs >= MIN_MAX_LOOP_STALL_MS)) {
    throw new InvalidOptionError(
      'maxLoopStallMs',
      `must be >= ${MIN_MAX_LOOP_STALL_MS}, got ${merged.maxLoopStallMs}`,
    );
  }
  if (!(Number.isFinite(merged.historyRetentionMs) && merged.historyRetentionMs >= 0)) {
    throw new InvalidOptionError(
      'historyRetentionMs',
      `must be >= 0 (0: off), got ${merged.historyRetentionMs}`,
    );
  }
  for (const name of ['requestTimeoutMs', 'joinTimeoutMs'] as const) {
    const v = merged[name];
    if (!(Number.isFinite(v) && v > 0)) throw new InvalidOptionError(name, `must be > 0, got ${v}`);
  }
  if (
    typeof merged.prefix !== 'string' ||
    !merged.prefix.startsWith('/') ||
    merged.prefix.endsWith('/')
  ) {
    throw new InvalidOptionError(
      'prefix',
      `must start and not end with '/', got ${JSON.stringify(merged.prefix)}`,
    );
  }
  return { ...merged, endpoints: [...endpoints], safetyMarginMs, keepAliveIntervalMs };
}

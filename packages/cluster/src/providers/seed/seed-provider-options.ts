import { InvalidOptionError } from '@granary/core';
import { rejectUnknownOptions } from '@granary/core/internal';
import type { ClusterLogger } from '../../internal/logger';

/** Options of SeedProvider. */
export interface SeedProviderOptions {
  /**
   * `host:port` of the seed node's remote transport. Required on every member but the seed
   * (the seed uses its own address).
   * @default undefined
   */
  seed?: string | undefined;
  /**
   * True on the one node that keeps the membership table.
   * @default false
   */
  isSeed?: boolean | undefined;
  /**
   * Lease TTL: a member that has not heartbeated for this long is removed and its claims freed.
   * Only the seed's value counts; members learn it when they join.
   * @default 3000
   */
  ttlMs?: number | undefined;
  /**
   * Interval between heartbeats; at most a quarter of the TTL so a lost one or two are survived.
   * @default ttlMs / 4
   */
  heartbeatIntervalMs?: number;
  /**
   * Deadline of each request to the seed.
   * @default 1000
   */
  requestTimeoutMs?: number;
  /**
   * How long join() retries while the seed is unreachable before it throws JoinTimeoutError.
   * @default 10000
   */
  joinTimeoutMs?: number;
  /**
   * Logger (pino-compatible).
   * @default a logger that drops everything
   */
  logger?: ClusterLogger;
}

/** Defaults of SeedProviderOptions (the heartbeat interval derives from the TTL). */
export const DEFAULT_SEED_PROVIDER_OPTIONS = {
  isSeed: false,
  ttlMs: 3000,
  requestTimeoutMs: 1000,
  joinTimeoutMs: 10_000,
} as const;

/** SeedProviderOptions with the defaults applied and checked. */
export interface ResolvedSeedProviderOptions {
  seed: string | undefined;
  isSeed: boolean;
  ttlMs: number;
  heartbeatIntervalMs: number;
  requestTimeoutMs: number;
  joinTimeoutMs: number;
  logger: ClusterLogger | undefined;
}

/** Every option SeedProvider knows (the compiler keeps it in step). */
export const SEED_PROVIDER_OPTION_KEYS = {
  seed: true,
  isSeed: true,
  ttlMs: true,
  heartbeatIntervalMs: true,
  requestTimeoutMs: true,
  joinTimeoutMs: true,
  logger: true,
} as const satisfies Record<keyof SeedProviderOptions, true>;

/** Applies the defaults and validates; throws InvalidOptionError naming the option. */
export function resolveSeedProviderOptions(
  options: SeedProviderOptions = {},
): ResolvedSeedProviderOptions {
  rejectUnknownOptions('SeedProvider', options, SEED_PROVIDER_OPTION_KEYS);
  const isSeed = options.isSeed ?? DEFAULT_SEED_PROVIDER_OPTIONS.isSeed;
  const seed = options.seed;
  if (!isSeed && (typeof seed !== 'string' || !/^[^:\s/]+:\d{1,5}$/.test(seed))) {
    throw new InvalidOptionError(
      'seed',
      `host:port of the seed node is required on a non-seed member, got ${JSON.stringify(seed)}`,
    );
  }
  const ttlMs = options.ttlMs ?? DEFAULT_SEED_PROVIDER_OPTIONS.ttlMs;
  if (!(Number.isFinite(ttlMs) && ttlMs >= 100)) {
    throw new InvalidOptionError('ttlMs', `must be a number >= 100, got ${ttlMs}`);
  }
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? ttlMs / 4;
  if (!(heartbeatIntervalMs > 0 && heartbeatIntervalMs <= ttlMs / 4)) {
    throw new InvalidOptionError(
      'heartbeatIntervalMs',
      `must be > 0 and <= ttlMs / 4 (${ttlMs / 4}), got ${heartbeatIntervalMs}`,
    );
  }
  const requestTimeoutMs =
    options.requestTimeoutMs ?? DEFAULT_SEED_PROVIDER_OPTIONS.requestTimeoutMs;
  const joinTimeoutMs = options.joinTimeoutMs ?? DEFAULT_SEED_PROVIDER_OPTIONS.joinTimeoutMs;
  for (const [name, v] of [
    ['requestTimeoutMs', requestTimeoutMs],
    ['joinTimeoutMs', joinTimeoutMs],
  ] as const) {
    if (!(Number.isFinite(v) && v > 0)) throw new InvalidOptionError(name, `must be > 0, got ${v}`);
  }
  return {
    seed,
    isSeed,
    ttlMs,
    heartbeatIntervalMs,
    requestTimeoutMs,
    joinTimeoutMs,
    logger: options.logger,
  };
}

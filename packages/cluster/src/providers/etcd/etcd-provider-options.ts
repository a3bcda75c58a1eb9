import type { IOptions } from 'etcd3';
import { InvalidClusterOptionError } from '../../errors';
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
   * keep-alive. At least 2, etcd's minimum with its default election timeout.
   * @default 3
   */
  ttlSeconds?: number;
  /**
   * Interval between keep-alives; must leave room for a missed one inside the TTL.
   * @default ttlSeconds * 1000 / 4
   */
  keepAliveIntervalMs?: number;
  /**
   * The member fences itself this long before its lease could expire in etcd (time since the send
   * of the last successful keep-alive >= TTL - margin): covers clock rate drift and scheduling.
   * @default ttlSeconds * 1000 / 4
   */
  safetyMarginMs?: number;
  /**
   * Deadline of each etcd request (claim, release, keep-alive, registration).
   * @default 1000
   */
  requestTimeoutMs?: number;
  /**
   * How long join() retries (with backoff) while etcd is unreachable before it throws
   * JoinTimeoutError.
   * @default 10000
   */
  joinTimeoutMs?: number;
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
  ttlSeconds: 3,
  requestTimeoutMs: 1000,
  joinTimeoutMs: 10_000,
} as const;

/** etcd raises shorter TTLs to ceil(1.5 x election timeout) = 2 s with its default settings. */
export const MIN_ETCD_TTL_SECONDS = 2;
/** etcd's MaxLeaseTTL. */
const MAX_ETCD_TTL_SECONDS = 9_000_000_000;

/** EtcdProviderOptions with every default applied and checked. */
export type ResolvedEtcdProviderOptions = Required<Omit<EtcdProviderOptions, 'logger' | 'etcd'>> &
  Pick<EtcdProviderOptions, 'logger' | 'etcd'>;

/** Applies the defaults and validates; throws InvalidClusterOptionError naming the option. */
export function resolveEtcdProviderOptions(
  options: EtcdProviderOptions,
): ResolvedEtcdProviderOptions {
  const endpoints = options?.endpoints;
  if (!Array.isArray(endpoints) || endpoints.length === 0) {
    throw new InvalidClusterOptionError('endpoints', 'at least one etcd endpoint URL is required');
  }
  for (const e of endpoints) {
    if (typeof e !== 'string' || !/^(https?:\/\/)?[^/\s:]+(:\d+)?\/?$/.test(e)) {
      throw new InvalidClusterOptionError(
        'endpoints',
        `not an etcd endpoint URL: ${JSON.stringify(e)}`,
      );
    }
  }
  const merged = { ...DEFAULT_ETCD_PROVIDER_OPTIONS, ...stripUndefined(options) };
  const { ttlSeconds } = merged;
  if (
    !Number.isInteger(ttlSeconds) ||
    ttlSeconds < MIN_ETCD_TTL_SECONDS ||
    ttlSeconds > MAX_ETCD_TTL_SECONDS
  ) {
    throw new InvalidClusterOptionError(
      'ttlSeconds',
      `must be a whole number of seconds >= ${MIN_ETCD_TTL_SECONDS} (etcd raises shorter leases), got ${ttlSeconds}`,
    );
  }
  const ttlMs = ttlSeconds * 1000;
  const safetyMarginMs = merged.safetyMarginMs ?? ttlMs / 4;
  if (!(safetyMarginMs >= 0 && safetyMarginMs < ttlMs)) {
    throw new InvalidClusterOptionError(
      'safetyMarginMs',
      `must be in [0, ttlSeconds * 1000), got ${safetyMarginMs}`,
    );
  }
  const keepAliveIntervalMs = merged.keepAliveIntervalMs ?? ttlMs / 4;
  if (!(keepAliveIntervalMs > 0 && keepAliveIntervalMs * 2 <= ttlMs - safetyMarginMs)) {
    throw new InvalidClusterOptionError(
      'keepAliveIntervalMs',
      `must be > 0 and at most half of ttlSeconds * 1000 - safetyMarginMs (${ttlMs - safetyMarginMs}), got ${keepAliveIntervalMs}`,
    );
  }
  for (const name of ['requestTimeoutMs', 'joinTimeoutMs'] as const) {
    const v = merged[name];
    if (!(Number.isFinite(v) && v > 0))
      throw new InvalidClusterOptionError(name, `must be > 0, got ${v}`);
  }
  if (
    typeof merged.prefix !== 'string' ||
    !merged.prefix.startsWith('/') ||
    merged.prefix.endsWith('/')
  ) {
    throw new InvalidClusterOptionError(
      'prefix',
      `must start and not end with '/', got ${JSON.stringify(merged.prefix)}`,
    );
  }
  return { ...merged, endpoints: [...endpoints], safetyMarginMs, keepAliveIntervalMs };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

import { InvalidOptionError } from '@granary/core';
import type { ClusterOptions, ClusterRemoteOptions } from './cluster-options';
import type { GrainsOptions } from './grains/grains-options';
import { rejectUnknownNestedOptions, rejectUnknownOptions } from '@granary/core/internal';
import type { OpsOptions } from './ops/ops-options';
import type { OverloadOptions } from './overload/overload-options';
import { ETCD_PROVIDER_OPTION_KEYS } from './providers/etcd/etcd-provider-options';
import { MEMORY_PROVIDER_OPTION_KEYS } from './providers/memory/memory-provider';
import { SEED_PROVIDER_OPTION_KEYS } from './providers/seed/seed-provider-options';
import type { RemindersOptions } from './reminders/reminders-options';

/** Every option Cluster.start knows (the compiler keeps it in step with its options). */
const START_OPTION_KEYS = {
  name: true,
  provider: true,
  kinds: true,
  id: true,
  address: true,
  remote: true,
  shardCount: true,
  claimRanges: true,
  claimRetryMs: true,
  stateStores: true,
  reminders: true,
  logger: true,
  telemetry: true,
  ops: true,
  system: true,
  requestTimeoutMs: true,
  onActivation: true,
  overload: true,
} as const satisfies Record<keyof (ClusterOptions & GrainsOptions), true>;

const REMOTE_OPTION_KEYS = {
  host: true,
  port: true,
  listen: true,
  advertisedHost: true,
  secret: true,
  tls: true,
  insecure: true,
  batchSize: true,
  maxMessageBytes: true,
  largeMessageBytes: true,
  maxLargeBytesInFlight: true,
  maxOutboundBytes: true,
  writeStallTimeoutMs: true,
  linkProbeMs: true,
  maxEndpoints: true,
  endpointDownTtlMs: true,
  logIntervalMs: true,
  limits: true,
  connectTimeoutMs: true,
  handshakeTimeoutMs: true,
  reconnect: true,
  serialization: true,
} as const satisfies Record<keyof ClusterRemoteOptions, true>;

const OPS_OPTION_KEYS = {
  port: true,
  host: true,
  prometheus: true,
  maxEventLoopDelayMs: true,
  livenessWindowMs: true,
  maxConnections: true,
  headersTimeoutMs: true,
  requestTimeoutMs: true,
} as const satisfies Record<keyof OpsOptions, true>;

const REMINDERS_OPTION_KEYS = {
  store: true,
  deliveryTimeoutMs: true,
  maxFiresInFlight: true,
} as const satisfies Record<keyof RemindersOptions, true>;

const OVERLOAD_OPTION_KEYS = {
  maxOutstandingCalls: true,
  maxPendingCalls: true,
  loadShedding: true,
  retryBudget: true,
} as const satisfies Record<keyof OverloadOptions, true>;

/**
 * Options of a provider, not of Cluster.start (name -> the providers that take it): the cluster
 * README's `joinTimeoutMs` or `ttlSeconds` given to Cluster.start is refused saying where it goes.
 */
const PROVIDER_OPTIONS: Readonly<Record<string, string>> = providerOptions({
  EtcdProvider: ETCD_PROVIDER_OPTION_KEYS,
  SeedProvider: SEED_PROVIDER_OPTION_KEYS,
  MemoryProvider: MEMORY_PROVIDER_OPTION_KEYS,
});

/**
 * Throws InvalidOptionError naming the first option of Cluster.start, or of its `remote`, `ops`,
 * `reminders` and `overload` objects, that it does not know, with the one likely meant. Options
 * often come from JavaScript or a config file: `remote: { secrt }` started a member that
 * authenticated nobody, `ops: { hots }` bound loopback, and `reminders: { stor }` failed with a
 * bare TypeError.
 */
export function rejectUnknownStartOptions(options: ClusterOptions & GrainsOptions): void {
  rejectUnknownOptions('Cluster.start', options, START_OPTION_KEYS, PROVIDER_OPTIONS);
  rejectUnknownNestedOptions('Cluster.start', 'remote', options.remote, REMOTE_OPTION_KEYS);
  rejectUnknownNestedOptions('Cluster.start', 'ops', options.ops, OPS_OPTION_KEYS);
  rejectUnknownNestedOptions(
    'Cluster.start',
    'reminders',
    options.reminders,
    REMINDERS_OPTION_KEYS,
  );
  rejectUnknownNestedOptions('Cluster.start', 'overload', options.overload, OVERLOAD_OPTION_KEYS);
  const store: unknown = options.reminders?.store;
  if (options.reminders !== undefined && (store === null || typeof store !== 'object')) {
    throw new InvalidOptionError(
      'reminders.store',
      `is required (a RedisReminderStore or MemoryReminderStore), got ${String(store)}`,
    );
  }
}

function providerOptions(
  byProvider: Record<string, Readonly<Record<string, true>>>,
): Record<string, string> {
  const takers: Record<string, string[]> = {};
  for (const [provider, keys] of Object.entries(byProvider)) {
    for (const name of Object.keys(keys)) (takers[name] ??= []).push(provider);
  }
  return Object.fromEntries(
    Object.entries(takers).map(([name, ps]) => [
      name,
      `the provider: ${ps.map((p) => `new ${p}({ ${name} })`).join(' or ')}`,
    ]),
  );
}

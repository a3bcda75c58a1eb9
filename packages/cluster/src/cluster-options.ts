import type { RemoteOptions } from '@granary/core';
import type { ClusterLogger } from './internal/logger';
import type { OpsOptions } from './ops/ops-options';
import type { TelemetryOptions } from './telemetry/telemetry';
import { DEFAULT_CLAIM_RANGES } from './placement/kind-ranges';
import type { ClusterProvider } from './providers/cluster-provider';
import type { StateStore } from './state/state-store';
import type { RemindersOptions } from './reminders/reminders-options';

/**
 * A kind this member hosts: `kind(name, factory, options)` (or a generated kind helper). Anything
 * else with a `name` and an optional `shardCount` only claims the kind's shards (membership
 * tests, a member that takes part in placement without grains). A bare string is refused at
 * start (InvalidOptionError): it would host nothing, and every call to the kind would time out.
 */
export type KindSpec = { readonly name: string; readonly shardCount?: number | undefined };

/**
 * Where this member's remote transport listens and how it authenticates peers: every option
 * of core's RemoteOptions (`secret`, `tls`, `insecure`, limits, ...) except the cluster name
 * and member id, which are the cluster's.
 *
 * @example
 * remote: { host: '0.0.0.0', port: 4000, advertisedHost: 'node-a', secret: process.env.SECRET }
 */
export interface ClusterRemoteOptions extends Omit<
  RemoteOptions,
  'host' | 'port' | 'clusterName' | 'memberId'
> {
  /** Interface the remote transport binds to; beyond loopback it needs `secret` or mTLS. */
  host: string;
  /** Port; 0 picks a free one. */
  port: number;
  /** Host other members dial, if not `host` (e.g. behind NAT). */
  advertisedHost?: string;
}

/** Options of Cluster.start(). */
export interface ClusterOptions {
  /** Cluster name: members of different clusters never see each other. */
  name: string;
  /** Membership and claims: MemoryProvider, SeedProvider or EtcdProvider. */
  provider: ClusterProvider;
  /**
   * Kinds this member hosts (a client-only member hosts none).
   * @default []
   */
  kinds?: ReadonlyArray<KindSpec>;
  /**
   * Member id, unique in the cluster.
   * @default `<host>-<pid>-<random>`
   */
  id?: string;
  /**
   * Address other members reach this one at.
   * @default `<remote.advertisedHost ?? remote.host>:<remote.port>`, or 'nonhost' without remote
   */
  address?: string;
  /**
   * Remote transport: where it listens, its shared secret or TLS, its limits. The cluster
   * starts it with the cluster's name and this member's id (bound to the address in every
   * handshake).
   * @default undefined
   */
  remote?: ClusterRemoteOptions | undefined;
  /**
   * Shards per kind for kinds that do not set their own `shardCount`: identities hash into this
   * many shards. Every host of a kind must use the same count (a member that disagrees is refused
   * at join). The default spreads a kind evenly over ~1,600 members; see docs/scaling.md.
   * @default 16384
   */
  shardCount?: number;
  /**
   * At most this many claim ranges per kind: a kind's shards are cut into min(shardCount,
   * claimRanges) contiguous ranges, and placement and claims work per range, so a membership
   * change costs etcd writes in proportion to the ranges moved, whatever the shard count. Every
   * member must use the same value. Past ~1,600 members per kind raise it (and shardCount).
   * @default 16384
   */
  claimRanges?: number;
  /**
   * How often shards still held by another member are tried again, in case an event was missed.
   * @default 1000
   */
  claimRetryMs?: number;
  /**
   * State stores this member's kinds use: Cluster.start opens each (`open()`: a RedisStateStore
   * checks its durability level and identity marker) before it joins, and fails if one cannot
   * keep what it promises. A store it cannot reach (Redis restarting as the member starts) is
   * tried again for up to 10 s (logged once) before the start fails with StateUnavailableError.
   * Stores stay the caller's to close.
   * @default []
   */
  stateStores?: ReadonlyArray<StateStore>;
  /**
   * Durable reminders and one-off jobs of the kinds this member hosts: where they are stored
   * (the same store on every member) and how fires are delivered. Without it, `ctx.reminders`
   * and `cluster.reminders()` throw RemindersNotConfiguredError.
   * @default undefined
   */
  reminders?: RemindersOptions | undefined;
  /**
   * Logger (a pino logger as it is). Every part of the member logs to a child of it bound with
   * `{ node, component }` (the provider, state stores, the remote transport, pools), with
   * `trace_id`/`span_id` while a span is active.
   * @default the actor system's logger if `system` is given, else JSON lines of warn and above
   *   to stderr (core's createStderrLogger('warn'))
   */
  logger?: ClusterLogger | undefined;
  /**
   * Where spans and metrics go (`@opentelemetry/api` providers).
   * @default the global providers (an SDK registered before Cluster.start)
   */
  telemetry?: TelemetryOptions | undefined;
  /**
   * The ops HTTP server: `/livez`, `/readyz`, `/startupz`, `/metrics` on its own port.
   * @default undefined (no server)
   */
  ops?: OpsOptions | undefined;
}

/** Defaults of ClusterOptions. */
export const DEFAULT_CLUSTER_OPTIONS: Readonly<
  Required<Pick<ClusterOptions, 'kinds' | 'shardCount' | 'claimRanges' | 'claimRetryMs'>>
> = {
  kinds: [],
  shardCount: DEFAULT_CLAIM_RANGES,
  claimRanges: DEFAULT_CLAIM_RANGES,
  claimRetryMs: 1000,
};

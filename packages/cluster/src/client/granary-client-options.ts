import type { RemoteTlsOptions } from '@granary/core';
import type { ClusterLogger } from '../internal/logger';
import type { OverloadOptions } from '../overload/overload-options';

/** How a GranaryClient finds the members through etcd (read and watched; no lease taken). */
export interface GranaryClientEtcdOptions {
  /** etcd endpoints, e.g. `['http://127.0.0.1:2379']`. */
  endpoints: string[];
  /**
   * Key prefix the members use (their EtcdProvider's `prefix`).
   * @default '/granary'
   */
  prefix?: string;
  /**
   * Deadline of one etcd request.
   * @default 5000
   */
  requestTimeoutMs?: number;
}

/** Options of {@link GranaryClient.connect}: give `gateways` or `etcd`. */
export interface GranaryClientOptions {
  /** The cluster's name (the members' `Cluster.start({ name })`). */
  name: string;
  /**
   * Addresses (`host:port`) of members to learn the topology from; the client asks one, then
   * any member it has learned of, every `topologyRefreshMs`.
   */
  gateways?: readonly string[] | undefined;
  /** Learn and watch the topology in etcd, as members do (read only: no lease, no key). */
  etcd?: GranaryClientEtcdOptions | undefined;
  /**
   * The cluster's shared secret: the client proves it in every link's handshake, as members do.
   * @default undefined
   */
  secret?: string | undefined;
  /**
   * TLS, or mutual TLS: the client presents `cert` (it must cover the client's id).
   * @default undefined
   */
  tls?: RemoteTlsOptions | undefined;
  /**
   * The client's id, stated in its handshakes (unique among live links to a member).
   * @default `client-<host>-<pid>-<random>`
   */
  id?: string;
  /**
   * Deadline of a call that does not set `timeoutMs` (retries included).
   * @default 5000
   */
  requestTimeoutMs?: number;
  /**
   * How often the topology is asked again from a gateway (gateways only; etcd is watched).
   * @default 1000
   */
  topologyRefreshMs?: number;
  /**
   * The client's bound on its outstanding calls (`maxOutstandingCalls`) and its retry budget
   * (`retryBudget`), as a member's (docs/overload.md); the other fields are a host's and unused.
   */
  overload?: OverloadOptions | undefined;
  /**
   * Shards of each kind when members do not say (etcd: member records carry no shard counts).
   * @default 256 for every kind (the cluster default), unless a gateway told otherwise
   */
  shardCounts?: Readonly<Record<string, number>>;
  /**
   * Logger (pino-compatible).
   * @default a logger that drops everything
   */
  logger?: ClusterLogger;
}

/** Defaults of {@link GranaryClientOptions}. */
export const DEFAULT_GRANARY_CLIENT_OPTIONS = {
  requestTimeoutMs: 5000,
  topologyRefreshMs: 1000,
  defaultShardCount: 256,
} as const;

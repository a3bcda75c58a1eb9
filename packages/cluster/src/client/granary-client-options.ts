import type { RemoteTlsOptions } from '@granary/core';
import type { ClusterLogger } from '../internal/logger';
import type { OverloadOptions } from '../overload/overload-options';
import { DEFAULT_CLAIM_RANGES } from '../placement/kind-ranges';

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
   * Shards of each kind, for a kind whose hosts do not state it (members' records in etcd and
   * the topology gateways answer carry each hosted kind's count; this overrides them).
   * @default what the kind's hosts state, else 16384 (the cluster's default `shardCount`)
   */
  shardCounts?: Readonly<Record<string, number>>;
  /**
   * Logger (pino-compatible), for the client and its links.
   * @default core's default logger: warn and above to stderr as JSON lines
   */
  logger?: ClusterLogger;
}

/** Defaults of {@link GranaryClientOptions}. */
export const DEFAULT_GRANARY_CLIENT_OPTIONS = {
  requestTimeoutMs: 5000,
  topologyRefreshMs: 1000,
  defaultShardCount: DEFAULT_CLAIM_RANGES,
} as const;

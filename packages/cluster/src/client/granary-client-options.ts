import { InvalidOptionError, type RemoteTlsOptions } from '@granary/core';
import type { ClusterLogger } from '../internal/logger';
import { addressProblem } from '../membership/member-record';
import type { OverloadOptions } from '../overload/overload-options';
import { DEFAULT_CLAIM_RANGES } from '../placement/kind-ranges';
import { rejectUnknownOptions, unknownOptionOf } from '@granary/core/internal';

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

/** Every option GranaryClient.connect knows (the compiler keeps it in step). */
const CLIENT_OPTION_KEYS = {
  name: true,
  gateways: true,
  etcd: true,
  secret: true,
  tls: true,
  id: true,
  requestTimeoutMs: true,
  topologyRefreshMs: true,
  overload: true,
  shardCounts: true,
  logger: true,
} as const satisfies Record<keyof GranaryClientOptions, true>;

/** Every option of GranaryClientOptions.etcd. */
const CLIENT_ETCD_OPTION_KEYS = {
  endpoints: true,
  prefix: true,
  requestTimeoutMs: true,
} as const satisfies Record<keyof GranaryClientEtcdOptions, true>;

/**
 * Throws InvalidOptionError naming the first option `connect` could not work with, before
 * anything dials: options often come from JavaScript or a config file, where a gateway list
 * given as one string, or a URL, would only fail at the connect deadline, as a TypeError or
 * as "could not learn the members".
 */
export function checkGranaryClientOptions(o: GranaryClientOptions): void {
  // A misspelt option was ignored and its default ran: { timeoutMs: 1000 } waited 5 s.
  rejectUnknownOptions('GranaryClient.connect', o, CLIENT_OPTION_KEYS);
  if (typeof o.name !== 'string' || o.name.length === 0) {
    throw new InvalidOptionError('name', 'the cluster name is required');
  }
  if (o.gateways !== undefined) {
    if (!Array.isArray(o.gateways)) {
      throw new InvalidOptionError(
        'gateways',
        `must be an array of member addresses ('host:port'), got ${JSON.stringify(o.gateways)}`,
      );
    }
    for (const g of o.gateways as unknown[]) {
      if (addressProblem(g, 'a gateway') !== undefined) {
        throw new InvalidOptionError(
          'gateways',
          `${JSON.stringify(g)} is not a member address 'host:port' (a member's remote host and port, no scheme)`,
        );
      }
    }
  }
  if (o.etcd !== undefined) {
    const unknown =
      o.etcd !== null && typeof o.etcd === 'object'
        ? unknownOptionOf('GranaryClient.connect etcd', o.etcd, CLIENT_ETCD_OPTION_KEYS)
        : undefined;
    if (unknown !== undefined) throw new InvalidOptionError(`etcd.${unknown.name}`, unknown.detail);
    const endpoints: unknown = (o.etcd as { endpoints?: unknown } | null)?.endpoints;
    if (
      !Array.isArray(endpoints) ||
      endpoints.length === 0 ||
      endpoints.some((e) => typeof e !== 'string' || e.length === 0)
    ) {
      throw new InvalidOptionError(
        'etcd.endpoints',
        `must be a non-empty array of etcd URLs, got ${JSON.stringify(endpoints)}`,
      );
    }
  }
  if ((o.gateways ?? []).length === 0 && o.etcd === undefined) {
    throw new InvalidOptionError('gateways', 'give member addresses (gateways) or etcd');
  }
  for (const option of ['requestTimeoutMs', 'topologyRefreshMs'] as const) {
    const v: unknown = o[option];
    if (v !== undefined && !(typeof v === 'number' && v > 0 && Number.isFinite(v))) {
      throw new InvalidOptionError(option, `must be a number of ms > 0, got ${JSON.stringify(v)}`);
    }
  }
}

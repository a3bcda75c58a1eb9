import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { ActorSystem, InvalidArgumentError, Remote } from '@granary/core';
import { ClusterStoppedError } from '../errors';
import type { GrainCallOptions } from '../grains/grain';
import { GrainCaller } from '../grains/grain-caller';
import { checkIdentity } from '../grains/grain-identity';
import type { ClusterLogger } from '../internal/logger';
import type { Topology } from '../membership/topology';
import { ShardCounts } from '../placement/shard-counts';
import { shardOf } from '../placement/shard-of';
import { resolveOverloadOptions } from '../overload/overload-options';
import { OverloadCounters } from '../overload/overload-stats';
import {
  checkGranaryClientOptions,
  DEFAULT_GRANARY_CLIENT_OPTIONS,
  type GranaryClientOptions,
} from './granary-client-options';
import type { GrainReminders } from '../reminders/reminder';
import { ClientReminders, type ReminderRelay } from './client-reminders';
import { EtcdTopologySource, GatewayTopologySource, type TopologySource } from './topology-source';

/**
 * Host part of the address a client states in its handshakes: a name that resolves nowhere, so
 * nothing ever dials it; replies come back over the link the call went out on.
 */
const CLIENT_HOST_SUFFIX = '.client.invalid';

/**
 * A client of a Granary cluster that is not a member: no lease, no listening port, no
 * membership events. It learns the topology (from member gateways, or etcd, and keeps
 * following it), sends each call straight to the grain's owner over an authenticated link
 * (the cluster's `secret` or mutual TLS, like a member), and retries within the call's deadline
 * with the same retry loop members use. Anything that takes a `ClusterLike` (generated typed
 * clients) takes it.
 *
 * What `connect` creates, `close()` closes (the actor system, its links, the etcd client).
 *
 * @example
 * const client = await GranaryClient.connect({ name: 'shop', gateways: ['10.0.0.5:4000'], secret });
 * try {
 *   const pong = await PongerClient.for(client, 'p-1').ping({ cnt: '1' }, { idempotent: true });
 * } finally {
 *   await client.close();
 * }
 */
export class GranaryClient {
  /** This client's id (stated in its handshakes). */
  readonly id: string;
  /** The cluster it calls. */
  readonly name: string;
  private readonly caller: GrainCaller;
  private readonly shardCountOf: (kind: string) => number;
  private readonly unsubscribe: () => void;
  private readonly relay: ReminderRelay;
  private closed = false;

  private constructor(
    /**
     * The client's actor system: its links to the members (their events, e.g. core's
     * EndpointTerminatedEvent, are on its event stream). Closed by `close()`.
     */
    readonly system: ActorSystem,
    private readonly source: TopologySource,
    options: GranaryClientOptions & {
      requestTimeoutMs: number;
      topologyRefreshMs: number;
      defaultShardCount: number;
    },
    id: string,
    logger: ClusterLogger,
  ) {
    this.id = id;
    this.name = options.name;
    const shardCounts = options.shardCounts ?? {};
    // The kind's hosts state its count in the topology (etcd member keys, gateway snapshots).
    const hosted = new ShardCounts(new Map(), options.defaultShardCount);
    this.shardCountOf = (kind) =>
      shardCounts[kind] ?? source.shardCounts()[kind] ?? hosted.of(kind, source.topology());
    this.caller = new GrainCaller({
      system,
      memberId: id,
      // The client's bound on outstanding calls and its retry budget (it hosts no grains).
      overload: resolveOverloadOptions(options.overload),
      counters: new OverloadCounters(),
      defaultTimeoutMs: options.requestTimeoutMs,
      topology: () => source.topology(),
      shardCountOf: this.shardCountOf,
      onSendFailed: (kind, identity, err) =>
        logger.warn({ err, grain: `${kind}/${identity}` }, 'grain send was not delivered'),
      stopped: () => this.closed || system.isShuttingDown,
      clock: system.clock,
      random: system.random,
      membershipUnavailable: () => false,
    });
    this.unsubscribe = source.listeners.add(() => this.caller.topologyChanged());
    this.relay = {
      system,
      timeoutMs: options.requestTimeoutMs,
      topology: () => source.topology(),
      shardOf: (kind, identity) => this.shardOf(kind, identity),
      closed: () => this.closed,
    };
  }

  /**
   * Connects to the cluster `name`: through `gateways` (member addresses) or `etcd`. Resolves
   * once the topology is known, trying for `requestTimeoutMs`.
   * @throws InvalidOptionError naming a missing or bad option.
   * @throws ConnectTimeoutError when etcd or the gateways gave no topology in that time.
   */
  static async connect(options: GranaryClientOptions): Promise<GranaryClient> {
    checkGranaryClientOptions(options);
    const o = {
      ...DEFAULT_GRANARY_CLIENT_OPTIONS,
      ...options,
      // A field given as undefined (from a config file) keeps its default.
      requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_GRANARY_CLIENT_OPTIONS.requestTimeoutMs,
      topologyRefreshMs:
        options.topologyRefreshMs ?? DEFAULT_GRANARY_CLIENT_OPTIONS.topologyRefreshMs,
    };
    const gateways = o.gateways ?? [];
    const id = o.id ?? `client-${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    const system = new ActorSystem({
      name: `${o.name}-client`,
      ...(o.logger === undefined ? {} : { logger: o.logger }),
    });
    // One logger for the client and its links: an undelivered send is never silent.
    const logger = o.logger ?? system.logger;
    let source: TopologySource | undefined;
    try {
      await new Remote(system).start({
        listen: false,
        advertisedHost: `${id.replace(/[^A-Za-z0-9-]/g, '-').toLowerCase()}${CLIENT_HOST_SUFFIX}`,
        port: 1,
        clusterName: o.name,
        memberId: id,
        secret: o.secret,
        tls: o.tls,
      });
      source =
        o.etcd !== undefined
          ? new EtcdTopologySource(o.etcd, o.name, id, logger, o.requestTimeoutMs)
          : new GatewayTopologySource(
              system,
              gateways,
              o.topologyRefreshMs,
              o.requestTimeoutMs,
              logger,
              o.name,
            );
      await source.start();
      return new GranaryClient(system, source, o, id, logger);
    } catch (err) {
      await source?.stop().catch(() => undefined);
      await system.shutdown();
      throw err;
    }
  }

  /**
   * Calls grain `kind/identity` on its owner and resolves with its reply; retried like a
   * member's call (see `Cluster.request`).
   */
  request<T = unknown>(
    kind: string,
    identity: string,
    message: unknown,
    options?: GrainCallOptions,
  ): Promise<T> {
    if (this.closed)
      return Promise.reject(new ClusterStoppedError(`request to ${kind}/${identity}`));
    try {
      checkIdentity(identity);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    return this.caller.request<T>(kind, identity, message, options, undefined);
  }

  /** Sends to grain `kind/identity` without waiting for a reply (delivery retried). */
  send(kind: string, identity: string, message: unknown): void {
    if (this.closed) throw new ClusterStoppedError(`send to ${kind}/${identity}`);
    checkIdentity(identity);
    this.caller.send(kind, identity, message, undefined);
  }

  /**
   * The durable reminders and one-off jobs of grain `kind/identity`, as a member's
   * `cluster.reminders` (the grain is activated only when a fire is due). The client needs no
   * reminder store: each operation runs on a member (the grain's shard owner when known), which
   * stores it and has the owner schedule it; it is retried on another member within the
   * client's `requestTimeoutMs` when it did not run. Members must be started with `reminders`.
   * @throws InvalidArgumentError for an identity no call may name (see `request`); `set`
   *   rejects bad options at once, as on a member.
   * @example
   * await client.reminders('invoice', 'inv-7').set('send', { dueInMs: 86_400_000 });
   */
  reminders(kind: string, identity: string): GrainReminders {
    if (this.closed) throw new ClusterStoppedError(`reminders of ${kind}/${identity}`);
    checkIdentity(identity);
    if (typeof kind !== 'string' || kind.length === 0) {
      throw new InvalidArgumentError('kind', `must be a non-empty string, got ${String(kind)}`);
    }
    return new ClientReminders(this.relay, kind, identity);
  }

  /**
   * The shard `identity` of `kind` hashes to, with the shard count the kind's hosts state (as
   * `Cluster.shardOf`).
   */
  shardOf(kind: string, identity: string): number {
    return shardOf(identity, this.shardCountOf(kind));
  }

  /** The latest topology the client knows. */
  get topology(): Topology {
    return this.source.topology();
  }

  /** Stops the topology source and the client's links; calls in progress fail. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
    try {
      await this.source.stop();
    } finally {
      await this.system.shutdown();
    }
  }
}

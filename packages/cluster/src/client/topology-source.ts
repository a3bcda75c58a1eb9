import { LogThrottle, PID, type ActorSystem } from '@granary/core';
import { Etcd3 } from 'etcd3';
import { ConnectTimeoutError, MembershipRecordRejectedError } from '../errors';
import { JitteredBackoff } from '../internal/jittered-backoff';
import type { ClusterLogger } from '../internal/logger';
import { Listeners } from '../internal/listeners';
import type { Topology } from '../membership/topology';
import {
  TOPOLOGY_QUERY,
  TOPOLOGY_SERVICE,
  topologySnapshotProblem,
  type TopologySnapshot,
} from '../membership/topology-service';
import { EtcdKeys } from '../providers/etcd/etcd-keys';
import { EtcdTopologyWatch } from '../providers/etcd/etcd-topology-watch';
import { GatewayAnswers } from './gateway-answers';
import type { GranaryClientEtcdOptions } from './granary-client-options';

/** Where a client learns the topology from (and keeps learning it). */
export interface TopologySource {
  /** Resolves once a first topology is known. */
  start(): Promise<void>;
  topology(): Topology;
  /** Shard counts members told (gateways); empty when the source does not know them. */
  shardCounts(): Readonly<Record<string, number>>;
  readonly listeners: Listeners<Topology>;
  stop(): Promise<void>;
}

/** A member answering malformed topologies is logged at most once per this (ms), then counted. */
const REFUSAL_LOG_INTERVAL_MS = 10_000;
/** First retry delay of connect() while etcd does not answer. */
const CONNECT_BACKOFF_INITIAL_MS = 100;
/** Cap of that backoff: a client comes up within this long of etcd answering again. */
const CONNECT_BACKOFF_MAX_MS = 1000;

/** What connect() throws when its source gave no topology in time. */
function connectTimeout(
  from: string,
  source: { cluster: string; connectTimeoutMs: number },
  attempts: number,
  last: unknown,
): ConnectTimeoutError {
  const why = last instanceof Error ? last.message : String(last);
  return new ConnectTimeoutError(
    `could not learn the members of cluster '${source.cluster}' from ${from} within ` +
      `${source.connectTimeoutMs} ms (requestTimeoutMs) after ${attempts} attempt(s): ${why}`,
    { cause: last },
  );
}

/** The member keys in etcd, read and watched like a member does, without a lease. */
export class EtcdTopologySource implements TopologySource {
  readonly listeners = new Listeners<Topology>();
  private readonly client: Etcd3;
  private readonly watch: EtcdTopologyWatch;

  private readonly endpoints: readonly string[];

  constructor(
    options: GranaryClientEtcdOptions,
    readonly cluster: string,
    clientId: string,
    logger: ClusterLogger,
    /** The client's requestTimeoutMs: how long connect() tries. */
    readonly connectTimeoutMs: number,
  ) {
    this.endpoints = options.endpoints;
    this.client = new Etcd3({ hosts: options.endpoints });
    const keys = new EtcdKeys(options.prefix ?? '/granary', cluster);
    this.watch = new EtcdTopologyWatch(
      this.client,
      keys,
      logger,
      options.requestTimeoutMs ?? 5000,
      clientId,
    );
    this.watch.topologyListeners.add((t) => this.listeners.emit(t));
  }

  async start(): Promise<void> {
    const deadline = Date.now() + this.connectTimeoutMs;
    const backoff = new JitteredBackoff(CONNECT_BACKOFF_INITIAL_MS, CONNECT_BACKOFF_MAX_MS);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.watch.start(Math.max(1, deadline - Date.now()));
        return;
      } catch (err) {
        const delay = backoff.next();
        if (Date.now() + delay >= deadline) {
          throw connectTimeout(`etcd at ${this.endpoints.join(', ')}`, this, attempt, err);
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  topology(): Topology {
    return this.watch.topology();
  }

  shardCounts(): Readonly<Record<string, number>> {
    return {};
  }

  async stop(): Promise<void> {
    await this.watch.stop();
    this.client.close();
  }
}

/**
 * The topology as members' topology services tell it: asked of one gateway at start, then
 * every `refreshMs` of a member it knows (the given gateways first, then the members learned),
 * moving on to the next one when one does not answer.
 */
export class GatewayTopologySource implements TopologySource {
  readonly listeners = new Listeners<Topology>();
  private readonly answers = new GatewayAnswers();
  private counts: Readonly<Record<string, number>> = {};
  private timer: NodeJS.Timeout | undefined;
  private next = 0;
  private stopped = false;
  private readonly refusals: LogThrottle;

  constructor(
    private readonly system: ActorSystem,
    private readonly gateways: readonly string[],
    private readonly refreshMs: number,
    private readonly timeoutMs: number,
    private readonly logger: ClusterLogger,
    private readonly cluster: string,
  ) {
    this.refusals = new LogThrottle(logger, REFUSAL_LOG_INTERVAL_MS);
  }

  async start(): Promise<void> {
    const deadline = Date.now() + this.timeoutMs;
    let last: unknown;
    // A gateway's refusal says more than a later attempt that ran out of time: the last
    // attempt gets only what is left of requestTimeoutMs, so on a busy machine it often
    // times out and would hide why the earlier ones failed.
    let refused: unknown;
    let attempts = 0;
    while (Date.now() < deadline) {
      try {
        await this.refresh(deadline - Date.now());
        this.schedule();
        return;
      } catch (err) {
        last = err;
        if (MembershipRecordRejectedError.is(err)) refused = err;
        attempts++;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    const source = { cluster: this.cluster, connectTimeoutMs: this.timeoutMs };
    const from = `gateways ${this.gateways.join(', ')}`;
    throw connectTimeout(from, source, attempts, refused ?? last);
  }

  topology(): Topology {
    return this.answers.topology();
  }

  shardCounts(): Readonly<Record<string, number>> {
    return this.counts;
  }

  stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.refusals.close();
    return Promise.resolve();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.refresh(this.refreshMs).then(
        () => this.schedule(),
        (err: unknown) => {
          // A member that answers a malformed topology is worth a warning (throttled); one
          // that does not answer is routine while members come and go.
          if (MembershipRecordRejectedError.is(err)) {
            this.refusals.log('refused', 'warn', { err }, err.message);
          } else this.logger.debug({ err }, 'topology refresh failed; trying the next member');
          this.schedule();
        },
      );
    }, this.refreshMs);
    this.timer.unref();
  }

  /** Asks the next member in turn; GatewayAnswers decides whether its answer is taken. */
  private async refresh(timeoutMs: number): Promise<void> {
    const asked = new Set([
      ...this.topology()
        .members.filter((m) => m.status === 'up')
        .map((m) => m.address),
      ...this.gateways,
    ]);
    const candidates = [...asked];
    const address = candidates[this.next++ % candidates.length]!;
    const reply = await this.system.root.request(
      new PID(address, TOPOLOGY_SERVICE),
      TOPOLOGY_QUERY,
      { timeoutMs: Math.max(1, Math.min(timeoutMs, 2000)) },
    );
    const problem = topologySnapshotProblem(reply);
    if (problem !== undefined) {
      throw new MembershipRecordRejectedError(`the topology from ${address}`, problem, 'refused');
    }
    const snapshot = reply as TopologySnapshot;
    const before = this.topology();
    const outcome = this.answers.take(address, snapshot, asked);
    if (outcome === 'ignored') {
      const why = `version ${snapshot.version} is above the ${before.version} other members answer`;
      const err = new MembershipRecordRejectedError(`the topology from ${address}`, why);
      this.refusals.log('outlier', 'warn', { err }, err.message);
      return;
    }
    // Counts of kinds no member hosts any more are dropped: a member naming new kinds in
    // every answer grew the table without end.
    this.counts = hostedCounts({ ...this.counts, ...snapshot.shardCounts }, this.topology());
    if (this.topology() !== before) this.listeners.emit(this.topology());
  }
}

/** The entries of `counts` whose kind some member of `topology` hosts. */
function hostedCounts(
  counts: Readonly<Record<string, number>>,
  topology: Topology,
): Readonly<Record<string, number>> {
  const hosted = new Set(topology.members.flatMap((m) => m.kinds));
  return Object.fromEntries(Object.entries(counts).filter(([kind]) => hosted.has(kind)));
}

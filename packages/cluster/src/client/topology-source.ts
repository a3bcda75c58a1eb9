import { PID, type ActorSystem } from '@granary/core';
import { Etcd3 } from 'etcd3';
import type { ClusterLogger } from '../internal/logger';
import { Listeners } from '../internal/listeners';
import { EMPTY_TOPOLOGY, type Topology } from '../membership/topology';
import {
  TOPOLOGY_QUERY,
  TOPOLOGY_SERVICE,
  isTopologySnapshot,
} from '../membership/topology-service';
import { EtcdKeys } from '../providers/etcd/etcd-keys';
import { EtcdTopologyWatch } from '../providers/etcd/etcd-topology-watch';
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

/** The member keys in etcd, read and watched like a member does, without a lease. */
export class EtcdTopologySource implements TopologySource {
  readonly listeners = new Listeners<Topology>();
  private readonly client: Etcd3;
  private readonly watch: EtcdTopologyWatch;

  constructor(
    options: GranaryClientEtcdOptions,
    cluster: string,
    clientId: string,
    logger: ClusterLogger,
  ) {
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

  start(): Promise<void> {
    return this.watch.start();
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
  private current: Topology = EMPTY_TOPOLOGY;
  private counts: Readonly<Record<string, number>> = {};
  private timer: NodeJS.Timeout | undefined;
  private next = 0;
  private stopped = false;

  constructor(
    private readonly system: ActorSystem,
    private readonly gateways: readonly string[],
    private readonly refreshMs: number,
    private readonly timeoutMs: number,
    private readonly logger: ClusterLogger,
  ) {}

  async start(): Promise<void> {
    const deadline = Date.now() + this.timeoutMs;
    let last: unknown;
    while (Date.now() < deadline) {
      try {
        await this.refresh(deadline - Date.now());
        this.schedule();
        return;
      } catch (err) {
        last = err;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    throw last;
  }

  topology(): Topology {
    return this.current;
  }

  shardCounts(): Readonly<Record<string, number>> {
    return this.counts;
  }

  stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    return Promise.resolve();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.refresh(this.refreshMs).then(
        () => this.schedule(),
        (err: unknown) => {
          this.logger.debug({ err }, 'topology refresh failed; trying the next member');
          this.schedule();
        },
      );
    }, this.refreshMs);
    this.timer.unref();
  }

  /** Asks the next member in turn; a newer answer replaces the topology. */
  private async refresh(timeoutMs: number): Promise<void> {
    const candidates = [
      ...new Set([
        ...this.current.members.filter((m) => m.status === 'up').map((m) => m.address),
        ...this.gateways,
      ]),
    ];
    const address = candidates[this.next++ % candidates.length]!;
    const reply = await this.system.root.request(
      new PID(address, TOPOLOGY_SERVICE),
      TOPOLOGY_QUERY,
      { timeoutMs: Math.max(1, Math.min(timeoutMs, 2000)) },
    );
    if (!isTopologySnapshot(reply)) throw new Error(`${address} answered no topology`);
    this.counts = { ...this.counts, ...reply.shardCounts };
    if (reply.version > this.current.version || this.current === EMPTY_TOPOLOGY) {
      this.current = Object.freeze({ version: reply.version, members: reply.members });
      this.listeners.emit(this.current);
    }
  }
}

import { InvalidOptionError } from '@granary/core';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { DEFAULT_CLUSTER_OPTIONS, type ClusterOptions } from './cluster-options';
import { ClusterStoppedError } from './errors';
import type { GrainCallOptions, GrainSendOptions } from './grains/grain';
import { GrainRuntime } from './grains/grain-runtime';
import type { GrainsOptions } from './grains/grains-options';
import { NOOP_LOGGER, type ClusterLogger } from './internal/logger';
import { TypedEvents } from './internal/typed-events';
import { validateKinds } from './internal/validate-kinds';
import type { ClusterEvents } from './membership/cluster-events';
import { ShardOwnership, type BeforeReleaseHook } from './membership/shard-ownership';
import { diffTopology } from './membership/topology-diff';
import { EMPTY_TOPOLOGY, type Member, type Topology } from './membership/topology';
import type { ActorSystem } from '@granary/core';
import { ownerOf } from './placement/owner-of';
import { shardOf } from './placement/shard-of';
import type { ClusterProvider } from './providers/cluster-provider';

/**
 * One member of a Granary cluster: joins through a ClusterProvider, follows the topology, and
 * claims the shards it is the desired owner of. `canServe(kind, shard)` is the per-turn check
 * grain delivery relies on.
 *
 * @example
 * const cluster = await Cluster.start({ name: 'shop', provider, kinds: ['Cart'] });
 * cluster.on('shard-acquired', ({ kind, shard, epoch }) => log(kind, shard, epoch));
 * // ...
 * await cluster.shutdown({ graceful: true });
 */
export class Cluster {
  private readonly events: TypedEvents<ClusterEvents>;
  private readonly ownership: ShardOwnership;
  private readonly shardCounts: Map<string, number>;
  private readonly unsubscribe: Array<() => void> = [];
  private current: Topology = EMPTY_TOPOLOGY;
  private state: 'starting' | 'running' | 'stopping' | 'stopped' = 'starting';
  /** Grains: actor system, router, activator, calls (set by start). */
  private grains!: GrainRuntime;

  private constructor(
    /** Cluster name. */
    readonly name: string,
    /** This member's id. */
    readonly id: string,
    /** This member's remote address. */
    readonly address: string,
    /** The provider this member joined through. */
    readonly provider: ClusterProvider,
    private readonly options: ClusterOptions & typeof DEFAULT_CLUSTER_OPTIONS,
    private readonly logger: ClusterLogger,
  ) {
    const kinds = validateKinds(options.kinds, options.shardCount);
    this.shardCounts = new Map(kinds.map((k) => [k.name, k.shardCount]));
    this.events = new TypedEvents((err) => logger.error({ err }, 'cluster event listener threw'));
    this.ownership = new ShardOwnership(
      provider,
      id,
      kinds,
      {
        acquired: (e) => this.events.emit('shard-acquired', e),
        released: (e) => this.events.emit('shard-released', e),
      },
      logger,
      options.claimRetryMs,
    );
  }

  /** Validates the options, joins the cluster and starts claiming shards. */
  static async start(options: ClusterOptions & GrainsOptions): Promise<Cluster> {
    const merged = { ...DEFAULT_CLUSTER_OPTIONS, ...options };
    if (typeof merged.name !== 'string' || merged.name.length === 0 || merged.name.includes('/')) {
      throw new InvalidOptionError('name', "must be a non-empty string without '/'");
    }
    if (!merged.provider) throw new InvalidOptionError('provider', 'is required');
    if (!(Number.isFinite(merged.claimRetryMs) && merged.claimRetryMs > 0)) {
      throw new InvalidOptionError('claimRetryMs', `must be > 0, got ${merged.claimRetryMs}`);
    }
    const id = merged.id ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    const remote = merged.remote;
    const grains = await GrainRuntime.create({ ...merged, id });
    const address =
      merged.address ??
      grains.address ??
      (remote ? `${remote.advertisedHost ?? remote.host}:${remote.port}` : 'nonhost');
    const logger = merged.logger ?? NOOP_LOGGER;
    try {
      const cluster = new Cluster(merged.name, id, address, merged.provider, merged, logger);
      cluster.grains = grains;
      grains.attach(cluster);
      await cluster.join();
      return cluster;
    } catch (err) {
      await grains.close(); // bad kinds or a failed join: nothing may keep the remote open
      throw err;
    }
  }

  /** The actor system this member's grains run in. */
  get system(): ActorSystem {
    return this.grains.system;
  }

  /**
   * Calls grain `kind/identity` (activated on demand on the owner of its shard) and resolves with
   * its reply. Placement and transport failures are retried with backoff within `timeoutMs`.
   * @throws GrainError (thrown by grain code, never retried), DeadlineExceededError,
   *   UnknownKindError, ActivationDeniedError, DeadlockError.
   * @example
   * const pong = await cluster.request('ponger', 'p-1', { ping: 1 }, { timeoutMs: 1000 });
   */
  request<T = unknown>(
    kind: string,
    identity: string,
    message: unknown,
    options?: GrainCallOptions,
  ): Promise<T> {
    try {
      this.assertRunning('request');
    } catch (err) {
      return Promise.reject(err as Error);
    }
    return this.grains.request<T>(kind, identity, message, options);
  }

  /**
   * Sends to grain `kind/identity` without waiting for a reply; delivery is retried like a
   * request's. With `sender`, the grain sees it as `ctx.sender`, so what the grain responds
   * goes to that actor (as a plain message, like a tell with a sender in Proto.Actor).
   *
   * @example
   * cluster.send('ponger', 'ponger-1', ping, { sender: ctx.self }); // the pong arrives in receive
   */
  send(kind: string, identity: string, message: unknown, options?: GrainSendOptions): void {
    this.assertRunning('send');
    this.grains.sendTo(kind, identity, message, options?.sender);
  }

  /** Live grain activations on this member (of one kind, or all). */
  activationCount(kind?: string): number {
    return this.grains.activationCount(kind);
  }

  /** The latest topology this member has seen. */
  get topology(): Topology {
    return this.current;
  }

  /** This member as the topology lists it (undefined while not registered, e.g. fenced). */
  get self(): Member | undefined {
    return this.current.members.find((m) => m.id === this.id);
  }

  /** Subscribes to an event; the returned function unsubscribes. */
  on<K extends keyof ClusterEvents>(
    event: K,
    listener: (payload: ClusterEvents[K]) => void,
  ): () => void {
    return this.events.on(event, listener);
  }

  /**
   * O(1): true only while this member holds the claim on the shard and can prove its lease is
   * alive. Check it on every grain turn: after a blocked event loop it is false at wake-up, before
   * the lease-lost event has even been delivered.
   */
  canServe(kind: string, shard: number): boolean {
    return this.ownership.canServe(kind, shard);
  }

  /** The epoch of this member's claim on the shard (the state fencing token), or undefined. */
  epochOf(kind: string, shard: number): number | undefined {
    return this.ownership.epochOf(kind, shard);
  }

  /** Shards of `kind` this member holds. */
  heldShards(kind: string): number[] {
    return this.ownership.heldShards(kind);
  }

  /** Shard count of a kind (its own, else the cluster default). */
  shardCountOf(kind: string): number {
    return this.shardCounts.get(kind) ?? this.options.shardCount;
  }

  /** The shard of a grain identity. */
  shardOf(kind: string, identity: string): number {
    return shardOf(identity, this.shardCountOf(kind));
  }

  /** The desired owner of a shard under the current topology. */
  ownerOf(kind: string, shard: number): Member | undefined {
    return ownerOf(kind, shard, this.current);
  }

  /**
   * Registers a drain hook: before this member releases a shard (rebalance or graceful shutdown)
   * every hook runs and must settle. Returns a function that removes the hook.
   */
  onBeforeRelease(hook: BeforeReleaseHook): () => void {
    return this.ownership.onBeforeRelease(hook);
  }

  /**
   * Leaves the cluster. Graceful (default): status `leaving`, drain and release every shard, then
   * delete the member. Not graceful: delete the member and its claims at once.
   */
  async shutdown(options: { graceful?: boolean } = {}): Promise<void> {
    if (this.state === 'stopping' || this.state === 'stopped') return;
    this.state = 'stopping';
    const graceful = options.graceful ?? true;
    try {
      if (graceful) {
        this.grains.beginLeaving();
        await this.provider.markLeaving().catch((err) => {
          this.logger.warn({ err }, 'could not mark the member leaving; releasing anyway');
        });
        await this.ownership.releaseAll();
      }
      this.ownership.stop();
      await this.grains.deactivateAll('shutdown');
      await this.provider.leave();
    } finally {
      for (const off of this.unsubscribe) off();
      this.state = 'stopped';
      this.events.clear();
      await this.grains.close();
    }
  }

  private async join(): Promise<void> {
    this.unsubscribe.push(
      this.provider.onTopology((t) => this.applyTopology(t)),
      this.provider.onClaimReleased((e) => this.ownership.claimReleased(e)),
      this.provider.onLetGoAsked?.(() => this.ownership.letGoAsked()) ?? (() => undefined),
      this.provider.onLeaseHealth((h) => {
        if (h === 'lease-lost') {
          this.logger.warn({ member: this.id }, 'lease lost: fenced, re-registering');
          this.ownership.leaseLost();
          this.events.emit('lease-lost', undefined);
        } else {
          this.logger.info({ member: this.id }, 'lease restored: claiming again');
          this.events.emit('lease-restored', undefined);
          this.ownership.leaseRestored();
        }
      }),
    );
    try {
      await this.provider.join({
        cluster: this.name,
        id: this.id,
        address: this.address,
        kinds: [...this.shardCounts.keys()],
        system: this.grains?.system,
      });
    } catch (err) {
      for (const off of this.unsubscribe) off();
      this.state = 'stopped';
      throw err;
    }
    this.state = 'running';
    this.applyTopology(this.provider.topology());
    this.ownership.start(this.current);
  }

  private applyTopology(t: Topology): void {
    if (this.state === 'stopped') return;
    if (t.version < this.current.version || t === this.current) return;
    const diff = diffTopology(this.current, t);
    this.current = t;
    for (const m of diff.left) this.events.emit('member-left', m);
    for (const m of diff.joined) this.events.emit('member-joined', m);
    this.events.emit('topology', t);
    if (this.state === 'running' || this.state === 'stopping') {
      this.ownership.topologyChanged(t);
      for (const m of diff.left) this.ownership.memberLeft(m.id);
    }
  }

  /** Throws if the member has shut down (for methods added by other parts of the package). */
  protected assertRunning(operation: string): void {
    if (this.state === 'stopped') throw new ClusterStoppedError(operation);
  }
}

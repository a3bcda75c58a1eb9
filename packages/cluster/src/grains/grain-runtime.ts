import { ActorSystem, InvalidOptionError, PID, Remote, type Logger } from '@granary/core';
import type { ClusterRemoteOptions } from '../cluster-options';
import type { ClusterLogger } from '../internal/logger';
import type { ShardReleased } from '../membership/cluster-events';
import type { Member, Topology } from '../membership/topology';
import type { Activation } from './activation';
import { Activator } from './activator';
import type { DeactivationReason, GrainCallOptions, GrainClusterHandle } from './grain';
import { GrainCaller } from './grain-caller';
import { GrainRouter } from './grain-router';
import { DEFAULT_GRAINS_OPTIONS, type GrainsOptions } from './grains-options';
import { grainPrefixOf, routerIdOf } from './internal/call-headers';
import { control } from './internal/control-replies';
import type { GrainHost, ParentCall } from './internal/grain-host';
import { KindSlot } from './internal/kind-slot';
import { isKindDefinition } from './kind';

/** How long a non-graceful stop waits for activations to run onDeactivate. */
const FORCED_STOP_WAIT_MS = 2000;

/** The parts of the Cluster facade the grain runtime uses. */
export interface ClusterView extends GrainClusterHandle {
  readonly topology: Topology;
  canServe(kind: string, shard: number): boolean;
  epochOf(kind: string, shard: number): number | undefined;
  ownerOf(kind: string, shard: number): Member | undefined;
  shardCountOf(kind: string): number;
  onBeforeRelease(hook: (kind: string, shard: number) => void | Promise<void>): () => void;
  on(event: 'shard-released', listener: (e: ShardReleased) => void): () => void;
  on(event: 'shard-acquired', listener: (e: { kind: string; shard: number }) => void): () => void;
  on(event: 'topology', listener: (t: Topology) => void): () => void;
}

/** What create() needs from Cluster.start's options. */
export interface GrainRuntimeInit extends GrainsOptions {
  name: string;
  logger?: ClusterLogger;
  kinds?: ReadonlyArray<unknown>;
  shardCount?: number;
  /** This member's id: the remote states it in its handshakes. */
  id?: string;
  remote?: ClusterRemoteOptions;
}

/**
 * The grains half of a cluster member: its actor system (and remote), a grain router per
 * hosted kind at `address/$g/<kind>`, the activator, and the caller. Created by Cluster.start before joining
 * (so the address is known), attached to the cluster right after.
 */
export class GrainRuntime implements GrainHost {
  readonly logger: Logger;
  readonly activationTimeoutMs: number;
  private readonly slots = new Map<string, KindSlot>();
  private readonly activator: Activator;
  private readonly caller: GrainCaller;
  private view: ClusterView | undefined = undefined;
  private readonly off: Array<() => void> = [];
  private accepting = true;
  private stopped = false;
  /**
   * This member's routers by kind, and their PIDs (a PID caches its router: a local call skips
   * the registry).
   */
  private readonly routers = new Map<string, { router: GrainRouter; pid: PID }>();

  private constructor(
    readonly system: ActorSystem,
    private readonly ownsSystem: boolean,
    private readonly init: GrainRuntimeInit,
  ) {
    this.logger = system.logger.child({ component: 'grains' });
    this.activationTimeoutMs = init.requestTimeoutMs ?? DEFAULT_GRAINS_OPTIONS.requestTimeoutMs;
    this.activator = new Activator({ system, host: this, accepting: () => this.accepting });
    this.caller = new GrainCaller({
      system,
      defaultTimeoutMs: this.activationTimeoutMs,
      topology: () => this.cluster_().topology,
      shardCountOf: (kind) =>
        this.slots.get(kind)?.shardCount ?? this.cluster_().shardCountOf(kind),
      onSendFailed: (kind, identity, err) =>
        this.logger.warn({ err, grain: `${kind}/${identity}` }, 'grain send was not delivered'),
      stopped: () => this.stopped || system.isShuttingDown,
      localRouter: (kind) => this.routers.get(kind)?.pid,
    });
  }

  /** Validates the grain options, creates (or adopts) the actor system and starts its remote. */
  static async create(init: GrainRuntimeInit): Promise<GrainRuntime> {
    const timeout = init.requestTimeoutMs ?? DEFAULT_GRAINS_OPTIONS.requestTimeoutMs;
    if (!(timeout > 0)) {
      throw new InvalidOptionError('requestTimeoutMs', `must be > 0, got ${timeout}`);
    }
    const owns = init.system === undefined;
    const system =
      init.system ??
      new ActorSystem({
        name: init.name,
        logger: init.logger ? asCoreLogger(init.logger) : undefined,
      });
    if (init.remote && system.remote === undefined) {
      const remote = new Remote(system);
      try {
        await remote.start({ ...init.remote, clusterName: init.name, memberId: init.id });
      } catch (err) {
        if (owns) await system.shutdown(); // e.g. InsecureRemoteError: nothing may stay running
        throw err;
      }
    }
    const runtime = new GrainRuntime(system, owns, init);
    for (const spec of init.kinds ?? []) {
      if (isKindDefinition(spec)) {
        const count = spec.shardCount ?? init.shardCount ?? 256;
        runtime.slots.set(spec.name, new KindSlot(spec, count, runtime));
      }
    }
    return runtime;
  }

  /** The address the actor system is reachable at, if remoting runs. */
  get address(): string | undefined {
    return this.system.address === 'nonhost' ? undefined : this.system.address;
  }

  /** Registers the router and the drain hook; called before the member joins. */
  attach(view: ClusterView): void {
    this.view = view;
    for (const slot of this.slots.values()) {
      const id = routerIdOf(slot.def.name);
      const deps = {
        host: this,
        activator: this.activator,
        registry: this.system.registry,
        deadLetter: (message: unknown, sender: PID | undefined) =>
          this.system.deadLetters.publish(
            new PID(this.system.address, id),
            message,
            sender,
            'not-a-grain-call',
          ),
      };
      const router = new GrainRouter(deps, slot);
      this.routers.set(slot.def.name, { router, pid: this.system.registry.add(id, router) });
      this.system.registry.addPrefix(grainPrefixOf(slot.def.name), router.byGrainId);
    }
    this.off.push(
      view.onBeforeRelease((kind, shard) => this.drainShard(kind, shard)),
      view.on('shard-released', (e) => this.shardReleased(e)),
      view.on('shard-acquired', (e) => {
        const slot = this.slots.get(e.kind);
        if (slot) slot.draining[e.shard] = 0;
      }),
      view.on('topology', () => this.caller.topologyChanged()),
    );
  }

  get cluster(): GrainClusterHandle {
    return this.cluster_();
  }

  request<T>(
    kind: string,
    identity: string,
    message: unknown,
    options?: GrainCallOptions,
  ): Promise<T> {
    return this.caller.request<T>(kind, identity, message, options, undefined);
  }

  sendTo(kind: string, identity: string, message: unknown, sender?: PID): void {
    this.caller.send(kind, identity, message, undefined, sender);
  }

  /** Live activations on this member, per kind. */
  activationCount(kind?: string): number {
    let n = 0;
    for (const s of this.slots.values())
      if (kind === undefined || s.def.name === kind) n += s.count;
    return n;
  }

  /** Graceful leave began: no new activations on this member. */
  beginLeaving(): void {
    this.accepting = false;
  }

  /** Ends every remaining activation (after the shards were released, or on a forced stop). */
  async deactivateAll(reason: DeactivationReason): Promise<void> {
    this.accepting = false;
    const ending: Promise<void>[] = [];
    for (const slot of this.slots.values()) {
      for (let s = 0; s < slot.shardCount; s++) {
        for (const a of slot.inShard(s)) {
          ending.push(a.ended());
          this.activator.requestDeactivate(a, reason);
        }
      }
    }
    if (ending.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(ending),
      new Promise((resolve) => (timer = setTimeout(resolve, FORCED_STOP_WAIT_MS))),
    ]);
    clearTimeout(timer);
  }

  /** Unregisters the router; shuts the actor system (and remote) down if the cluster made it. */
  async close(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const off of this.off) off();
    for (const [kind, { router, pid }] of this.routers) {
      this.system.registry.remove(pid);
      this.system.registry.removePrefix(grainPrefixOf(kind));
      router.dead = true;
    }
    if (this.ownsSystem) await this.system.shutdown();
  }

  // ── GrainHost ─────────────────────────────────────────────────────────────────────────

  canServe(kind: string, shard: number): boolean {
    return this.view !== undefined && this.view.canServe(kind, shard);
  }

  epochOf(kind: string, shard: number): number {
    return this.view?.epochOf(kind, shard) ?? 0;
  }

  reply(to: PID | undefined, message: unknown): void {
    if (to !== undefined) this.system.root.send(to, message);
  }

  replyNotOwner(to: PID | undefined, kind: string, shard: number): void {
    if (to === undefined) return;
    const owner = this.view?.ownerOf(kind, shard)?.address;
    this.system.root.send(
      to,
      control(owner === undefined ? { c: 'not-owner' } : { c: 'not-owner', owner }),
    );
  }

  turnEnded(a: Activation, influencing: boolean): void {
    this.activator.turnEnded(a, influencing);
  }

  requestDeactivate(a: Activation, reason: DeactivationReason): void {
    this.activator.requestDeactivate(a, reason);
  }

  ended(a: Activation): void {
    this.activator.ended(a);
  }

  call<T>(
    kind: string,
    identity: string,
    message: unknown,
    options: GrainCallOptions | undefined,
    parent: ParentCall,
  ): Promise<T> {
    return this.caller.request<T>(kind, identity, message, options, parent);
  }

  send(kind: string, identity: string, message: unknown, parent: ParentCall, sender?: PID): void {
    this.caller.send(kind, identity, message, parent, sender);
  }

  activated(a: Activation): void {
    this.init.onActivation?.({
      type: 'activate',
      kind: a.slot.def.name,
      identity: a.identity,
      activationId: a.id,
      member: this.cluster_().id,
      at: Date.now(),
    });
  }

  deactivated(a: Activation, reason: DeactivationReason): void {
    this.init.onActivation?.({
      type: 'deactivate',
      kind: a.slot.def.name,
      identity: a.identity,
      activationId: a.id,
      member: this.cluster_().id,
      at: Date.now(),
      reason,
    });
  }

  // ── internals ─────────────────────────────────────────────────────────────────────────

  private cluster_(): ClusterView {
    if (this.view === undefined)
      throw new Error('grain runtime used before Cluster.start attached it');
    return this.view;
  }

  private drainShard(kind: string, shard: number): Promise<void> | undefined {
    const slot = this.slots.get(kind);
    if (slot === undefined) return undefined;
    return this.activator.drain(slot, shard, this.accepting ? 'rebalance' : 'shutdown');
  }

  private shardReleased(e: ShardReleased): void {
    const slot = this.slots.get(e.kind);
    if (slot === undefined) return;
    slot.draining[e.shard] = 0;
    if (e.reason === 'lease-lost' || e.reason === 'vanished') {
      this.activator.evict(slot, e.shard, 'not-owner');
    }
  }
}

/** The cluster's logger as a core Logger (the system's own lines go to the same place). */
function asCoreLogger(l: ClusterLogger): Logger {
  const logger: Logger = {
    debug: (o, m) => l.debug(o, m),
    info: (o, m) => l.info(o, m),
    warn: (o, m) => l.warn(o, m),
    error: (o, m) => l.error(o, m),
    child: () => logger,
  };
  return logger;
}

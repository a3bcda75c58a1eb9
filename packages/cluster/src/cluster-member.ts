import { ROOT_CONTEXT } from '@opentelemetry/api';
import { LogThrottle, type ActorSystem, type PID } from '@granary/core';
import { START_CLAIMS_WAIT_MS, type ClusterInit } from './cluster-start';
import type { GrainCallOptions, GrainClusterHandle, GrainSendOptions } from './grains/grain';
import { GrainCaller } from './grains/grain-caller';
import { HostedGrains } from './grains/hosted-grains';
import { GrainServices } from './grains/internal/grain-services';
import { isKindDefinition } from './grains/kind';
import { JoinRefusedError } from './errors';
import type { ClusterLogger } from './internal/logger';
import { shardConflict } from './internal/shard-conflict';
import { LoadShedder, type DelayReader } from './overload/load-shedder';
import { OverloadCounters, overloadStatsOf, type OverloadStats } from './overload/overload-stats';
import { TypedEvents } from './internal/typed-events';
import { validateKinds } from './internal/validate-kinds';
import type { ClusterEvents } from './membership/cluster-events';
import { ShardOwnership } from './membership/shard-ownership';
import { StartShardEvents } from './membership/start-shard-events';
import { startTopologyService } from './membership/topology-service';
import { spawnReminderOpsActor } from './reminders/internal/reminder-ops';
import type { GrainReminders } from './reminders/reminder';
import { diffTopology } from './membership/topology-diff';
import { EMPTY_TOPOLOGY, type Member, type Topology } from './membership/topology';
import type { MemberState } from './ops/readiness-checks';
import type { OpsServer } from './ops/ops-server';
import type { KindShards } from './placement/kind-ranges';
import { ownerOf } from './placement/owner-of';
import { ShardCounts } from './placement/shard-counts';
import { shardOf } from './placement/shard-of';
import type { ClusterProvider } from './providers/cluster-provider';
import { ReminderService } from './reminders/reminder-service';
import { DEFAULT_REMINDERS_OPTIONS } from './reminders/reminders-options';
import { CallTelemetry } from './telemetry/call-telemetry';
import { ClusterMetrics, type MetricSources } from './telemetry/cluster-metrics';
import { traceFields } from './telemetry/grain-spans';
import { StateTelemetry } from './telemetry/state-telemetry';
import { ClusterTelemetry, endSpan } from './telemetry/telemetry';

/**
 * What one member of a cluster is made of, and how it takes part in membership: its parts built
 * in one pass (shard ownership, grain caller, hosted kinds, reminders, load shedder, telemetry),
 * the join, the placement of shards under its topology, each new topology applied, fencing when
 * its lease is lost. `Cluster` (cluster.ts) adds the start and leave sequences and the public
 * calls; users only ever see `Cluster`.
 */
export abstract class ClusterMember implements GrainClusterHandle {
  /** Cluster name. */
  readonly name: string;
  /** This member's id. */
  readonly id: string;
  /** This member's remote address. */
  readonly address: string;
  /** The provider this member joined through. */
  readonly provider: ClusterProvider;
  /** The actor system this member's grains run in. */
  readonly system: ActorSystem;
  protected readonly logger: ClusterLogger;
  /** The member's logger bound with `{ node }` only (handed to the provider). */
  private readonly rootLogger: ClusterLogger;
  protected readonly ownsSystem: boolean;
  protected readonly events: TypedEvents<ClusterEvents>;
  /** Shard events, held while start runs (see StartShardEvents). */
  protected readonly shardEvents: StartShardEvents;
  protected readonly ownership: ShardOwnership;
  /** Shard counts of this member's kinds and of those other members host. */
  private readonly shardCounts: ShardCounts;
  /** How each hosted kind is cut into shards and claim ranges (told to the provider at join). */
  private readonly kindShards: Record<string, KindShards>;
  /** The grain calls of this member and of the grains it hosts. */
  protected readonly caller: GrainCaller;
  /** The kinds this member hosts: routers, activators, activations. */
  protected readonly hosted: HostedGrains;
  /** Reminders and jobs of the shards this member owns (with `reminders` only). */
  protected readonly reminderService: ReminderService | undefined;
  /** Pending calls and load shedding of the grains this member hosts. */
  protected readonly load: LoadShedder;
  private readonly counters = new OverloadCounters();
  protected readonly unsubscribe: Array<() => void> = [];
  protected current: Topology = EMPTY_TOPOLOGY;
  /** The topology service clients that are not members ask (with a remote only). */
  protected topologyService: PID | undefined;
  /** Runs reminder operations for clients that are not members (with a remote only). */
  protected reminderOps: PID | undefined;
  protected state: MemberState = 'starting';
  /** The member's tracer and meter. */
  protected readonly telemetry: ClusterTelemetry;
  /** The member's instruments (undefined when no meter provider is registered). */
  protected readonly metrics: ClusterMetrics | undefined;
  /** Grain sends that could not be delivered, logged as counted summaries. */
  protected readonly sendFailures: LogThrottle;
  private leaseLosses = 0;
  private readonly releases = new Map<string, Map<string, number>>();
  /** The ops HTTP server (`/livez`, `/readyz`, `/startupz`, `/metrics`), if started. */
  readonly ops: OpsServer | undefined;

  /** Builds the whole member in one pass: ownership, caller, hosted kinds (nothing joined). */
  protected constructor(init: ClusterInit) {
    const { options, logger, system } = init;
    this.name = options.name;
    this.id = init.id;
    this.address = init.address;
    this.provider = options.provider;
    this.system = system;
    this.rootLogger = logger;
    this.logger = logger.child({ component: 'cluster' });
    this.ownsSystem = init.ownsSystem;
    this.ops = init.ops;
    this.telemetry = new ClusterTelemetry(init.id, options.telemetry);
    const meter = this.telemetry.meter;
    this.metrics =
      meter === undefined ? undefined : new ClusterMetrics(meter, this.metricSources());
    this.sendFailures = new LogThrottle(this.logger, 1000, system.clock);
    const kinds = validateKinds(options.kinds, options.shardCount, options.claimRanges);
    this.shardCounts = new ShardCounts(
      new Map(kinds.map((k) => [k.name, k.shards.shardCount])),
      options.shardCount,
    );
    this.kindShards = Object.fromEntries(kinds.map((k) => [k.name, k.shards]));
    this.events = new TypedEvents((err) =>
      this.logger.error({ err }, 'cluster event listener threw'),
    );
    this.shardEvents = new StartShardEvents(this.events);
    this.ownership = new ShardOwnership(
      options.provider,
      init.id,
      kinds,
      {
        acquired: (e) => {
          this.hosted.shardAcquired(e.kind, e.shard);
          this.reminderService?.acquired(e.kind, e.shard, e.epoch);
          this.shardEvents.emit('shard-acquired', e);
        },
        released: (e) => {
          this.countRelease(e.kind, e.reason);
          this.hosted.shardReleased(e);
          this.reminderService?.released(e.kind, e.shard);
          this.shardEvents.emit('shard-released', e);
        },
      },
      logger.child({ component: 'membership' }),
      options.claimRetryMs,
      system.clock,
      this.telemetry,
    );
    const hostsKinds = options.kinds.some(isKindDefinition);
    this.load = new LoadShedder(system, {
      ...init.overload,
      loadShedding: {
        ...init.overload.loadShedding,
        enabled: hostsKinds && init.overload.loadShedding.enabled,
      },
    });
    this.caller = new GrainCaller({
      system,
      memberId: init.id,
      overload: init.overload,
      counters: this.counters,
      defaultTimeoutMs: options.requestTimeoutMs,
      topology: () => this.current,
      shardCountOf: (kind) => this.shardCounts.of(kind, this.current),
      onSendFailed: (kind, identity, err) =>
        this.sendFailures.log(
          `send-failed:${kind}`,
          'warn',
          { err, grain: `${kind}/${identity}` },
          'grain send was not delivered',
        ),
      stopped: () => this.state === 'stopped' || system.isShuttingDown,
      clock: system.clock,
      random: system.random,
      membershipUnavailable: () => this.ownership.fenced || !this.ownership.leaseValid(),
      noTransport: system.remote === undefined,
      calls: new CallTelemetry(this.telemetry, this.metrics?.calls, () => system.clock.monotonic()),
    });
    const services = new GrainServices(
      system,
      this.caller,
      this,
      logger.child({ component: 'grains' }),
      options.requestTimeoutMs,
      options.onActivation,
      this.load,
      this.counters,
      this.telemetry,
      this.metrics?.grains,
    );
    services.state = new StateTelemetry(this.telemetry, this.metrics?.grains, () =>
      system.clock.monotonic(),
    );
    services.stateLogger = logger.child({ component: 'state' });
    const hosted = options.kinds.filter(isKindDefinition).map((def) => ({
      def,
      shardCount: this.shardCountOf(def.name),
      gate: this.ownership.gate(def.name)!,
    }));
    this.hosted = new HostedGrains(services, hosted);
    if (options.reminders) {
      const service = new ReminderService({
        system,
        options: { ...DEFAULT_REMINDERS_OPTIONS, ...options.reminders },
        selfId: init.id,
        logger,
        telemetry: this.telemetry,
        shardOf: (kind, id) => this.shardOf(kind, id),
        ownerOf: (kind, shard) => this.ownerOf(kind, shard),
        isMember: (address) => this.current.members.some((m) => m.address === address),
        request: (kind, id, message, o) => this.caller.request(kind, id, message, o, undefined),
      });
      this.reminderService = service;
      services.reminders = (kind, id) => service.handle(kind, id);
    }
    this.ownership.onBeforeRelease((kind, shard) => this.hosted.drain(kind, shard));
  }

  /** A grain call (Cluster.request); grains reach it as `ctx.cluster`. */
  abstract request<T = unknown>(
    kind: string,
    identity: string,
    message: unknown,
    options?: GrainCallOptions,
  ): Promise<T>;

  /** The reminders of grain `kind/identity` (Cluster.reminders). */
  abstract reminders(kind: string, identity: string): GrainReminders;

  /** A grain send (Cluster.send); grains reach it as `ctx.cluster`. */
  abstract send(kind: string, identity: string, message: unknown, options?: GrainSendOptions): void;

  /** Shard count of a kind (its own, else the cluster default). */
  shardCountOf(kind: string): number {
    return this.shardCounts.of(kind, this.current);
  }

  /** The shard of a grain identity. */
  shardOf(kind: string, identity: string): number {
    return shardOf(identity, this.shardCountOf(kind));
  }

  /** The desired owner of a shard under the current topology. */
  ownerOf(kind: string, shard: number): Member | undefined {
    return ownerOf(kind, shard, this.current);
  }

  /** overloadStats for one reader of the run-queue delay maximum (each resets its own). */
  protected overloadFigures(reader: DelayReader): OverloadStats {
    return overloadStatsOf(
      this.counters,
      this.load,
      this.system.expired,
      this.caller.budget,
      reader,
    );
  }

  /**
   * Subscribes to the provider, joins (checking shard conflicts the provider cannot), applies the
   * first topology and claims shards, until the first claims are answered (at most
   * START_CLAIMS_WAIT_MS); on a failed join the member is stopped.
   */
  protected async join(): Promise<void> {
    this.unsubscribe.push(
      this.provider.onTopology((t) => this.applyTopology(t)),
      this.provider.onClaimReleased((e) => this.ownership.claimReleased(e)),
      this.provider.onLetGoAsked?.(() => this.ownership.letGoAsked()) ?? (() => undefined),
      this.provider.onLeaseHealth((h) => {
        if (h === 'lease-lost') this.fence();
        else {
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
        kinds: [...this.shardCounts.own.keys()],
        kindShards: this.kindShards,
        system: this.system,
        logger: this.rootLogger,
      });
      // Providers that cannot check atomically (etcd does, in its registration) are checked
      // here, against the members listed at join.
      const conflict = shardConflict(this.id, this.kindShards, this.provider.topology().members);
      if (conflict) {
        await this.provider.leave().catch(() => undefined);
        throw new JoinRefusedError(conflict);
      }
    } catch (err) {
      for (const off of this.unsubscribe) off();
      this.state = 'stopped';
      throw err;
    }
    this.state = 'running';
    this.applyTopology(this.provider.topology());
    this.ownership.start(this.current);
    if (this.system.remote !== undefined) {
      this.topologyService = startTopologyService(
        this.system,
        () => this.current,
        () => Object.fromEntries(this.shardCounts.own),
      );
      this.reminderOps = spawnReminderOpsActor(this.system, this.id, (kind, id) =>
        this.reminders(kind, id),
      );
    }
    await this.ownership.claimsAnswered(START_CLAIMS_WAIT_MS);
  }

  /**
   * The lease is lost: fence (every claim treated as gone at once), in a span of its own so the
   * line and the shard releases it causes share a trace.
   */
  private fence(): void {
    this.leaseLosses++;
    const t = this.telemetry;
    const span = t.tracing ? t.startSpan('granary.lease.lost', 0, {}, ROOT_CONTEXT) : undefined;
    this.logger.warn(
      { member: this.id, ...traceFields(span) },
      'lease lost: fenced until the lease is proven alive again or re-registered',
    );
    try {
      this.ownership.leaseLost();
      this.events.emit('lease-lost', undefined);
    } finally {
      if (span !== undefined) endSpan(span);
    }
  }

  private countRelease(kind: string, reason: string): void {
    let byReason = this.releases.get(kind);
    if (byReason === undefined) this.releases.set(kind, (byReason = new Map()));
    byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
  }

  /** Where the member's instruments read their values. */
  private metricSources(): MetricSources {
    return {
      kinds: () => this.hosted.kindCounters(),
      claims: () =>
        this.ownership.claimStats().map(([kind, c]) => [
          kind,
          {
            held: this.ownership.heldShards(kind).length,
            acquired: c.acquired,
            conflicts: c.conflicts,
            failed: c.failed,
            releases: this.releases.get(kind) ?? new Map<string, number>(),
          },
        ]),
      leaseLosses: () => this.leaseLosses,
      members: () => {
        const byStatus = new Map<string, number>();
        for (const m of this.current.members) {
          byStatus.set(m.status, (byStatus.get(m.status) ?? 0) + 1);
        }
        return byStatus;
      },
      deadLetters: () => this.system.deadLetters.byReason,
      endpoints: () => this.system.remote?.endpointCount,
      traffic: () => this.system.remote?.traffic,
      overload: () => this.overloadFigures('metrics'),
    };
  }

  private applyTopology(t: Topology): void {
    if (this.state === 'stopped') return;
    if (t.version < this.current.version || t === this.current) return;
    const diff = diffTopology(this.current, t);
    this.current = t;
    // Replies to non-members go back over the link they came on; members may be dialled.
    this.system.remote?.setMembers(t.members.map((m) => m.address));
    for (const m of diff.left) this.events.emit('member-left', m);
    for (const m of diff.joined) this.events.emit('member-joined', m);
    this.caller.topologyChanged();
    this.events.emit('topology', t);
    if (this.state === 'running' || this.state === 'stopping') {
      this.ownership.topologyChanged(t);
      for (const m of diff.left) this.ownership.memberLeft(m.id);
    }
  }
}

import { randomBytes } from 'node:crypto';
import { ROOT_CONTEXT, type Meter } from '@opentelemetry/api';
import { hostname } from 'node:os';
import {
  ActorSystem,
  InvalidArgumentError,
  InvalidOptionError,
  LogThrottle,
  Remote,
  type PID,
  createStderrLogger,
  withTraceIds,
} from '@granary/core';
import { ClusterIntrospection } from './cluster-introspection';
import { DEFAULT_CLUSTER_OPTIONS, type ClusterOptions } from './cluster-options';
import { ClusterStoppedError, JoinRefusedError } from './errors';
import type { GrainCallOptions, GrainClusterHandle, GrainSendOptions } from './grains/grain';
import { GrainCaller } from './grains/grain-caller';
import { DEFAULT_GRAINS_OPTIONS, type GrainsOptions } from './grains/grains-options';
import { HostedGrains, type TurnStats } from './grains/hosted-grains';
import { GrainServices } from './grains/internal/grain-services';
import { isKindDefinition } from './grains/kind';
import type { ClusterLogger } from './internal/logger';
import { LoadShedder, type DelayReader } from './overload/load-shedder';
import { resolveOverloadOptions, type ResolvedOverloadOptions } from './overload/overload-options';
import { OverloadCounters, type OverloadStats } from './overload/overload-stats';
import { TypedEvents } from './internal/typed-events';
import { shardConflict } from './internal/shard-conflict';
import { validateKinds } from './internal/validate-kinds';
import type { ClusterEvents } from './membership/cluster-events';
import { ShardOwnership, type BeforeReleaseHook } from './membership/shard-ownership';
import { startTopologyService } from './membership/topology-service';
import { diffTopology } from './membership/topology-diff';
import { EMPTY_TOPOLOGY, type Member, type Topology } from './membership/topology';
import type { KindShards } from './placement/kind-ranges';
import { ownerOf } from './placement/owner-of';
import { shardOf } from './placement/shard-of';
import type { ClusterProvider } from './providers/cluster-provider';
import { RemindersNotConfiguredError } from './reminders/errors';
import type { GrainReminders } from './reminders/reminder';
import { ReminderService } from './reminders/reminder-service';
import type { ReminderStats } from './reminders/reminder-stats';
import { DEFAULT_REMINDERS_OPTIONS } from './reminders/reminders-options';
import { reportOf, type HealthCheck, type HealthReport, type HealthSource } from './ops/health';
import { OpsServer } from './ops/ops-server';
import { CallTelemetry } from './telemetry/call-telemetry';
import { ClusterMetrics, type MetricSources } from './telemetry/cluster-metrics';
import { traceFields } from './telemetry/grain-spans';
import { StateTelemetry } from './telemetry/state-telemetry';
import { ClusterTelemetry, endSpan } from './telemetry/telemetry';

type StartOptions = ClusterOptions & GrainsOptions;

/** What Cluster.start settled before building the member. */
interface ClusterInit {
  readonly id: string;
  readonly address: string;
  readonly system: ActorSystem;
  /** The cluster made the system (and its remote): it shuts them down with itself. */
  readonly ownsSystem: boolean;
  readonly options: StartOptions & typeof DEFAULT_CLUSTER_OPTIONS & { requestTimeoutMs: number };
  readonly overload: ResolvedOverloadOptions;
  /** The member's logger, bound with `{ node }` (parts bind their `component`). */
  readonly logger: ClusterLogger;
  /** The ops server, started before the join (undefined without `ops`). */
  readonly ops: OpsServer | undefined;
}

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
export class Cluster implements GrainClusterHandle, HealthSource {
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
  private readonly options: StartOptions & typeof DEFAULT_CLUSTER_OPTIONS;
  private readonly logger: ClusterLogger;
  /** The member's logger bound with `{ node }` only (handed to the provider). */
  private readonly rootLogger: ClusterLogger;
  private readonly ownsSystem: boolean;
  private readonly events: TypedEvents<ClusterEvents>;
  private readonly ownership: ShardOwnership;
  private readonly shardCounts: Map<string, number>;
  /** How each hosted kind is cut into shards and claim ranges (told to the provider at join). */
  private readonly kindShards: Record<string, KindShards>;
  /** The grain calls of this member and of the grains it hosts. */
  private readonly caller: GrainCaller;
  /** The kinds this member hosts: routers, activators, activations. */
  private readonly hosted: HostedGrains;
  /** Reminders and jobs of the shards this member owns (with `reminders` only). */
  private readonly reminderService: ReminderService | undefined;
  /** Pending calls and load shedding of the grains this member hosts. */
  private readonly load: LoadShedder;
  private readonly counters = new OverloadCounters();
  private readonly unsubscribe: Array<() => void> = [];
  private current: Topology = EMPTY_TOPOLOGY;
  /** Shard counts of the kinds members host, under `topology` (see shardCountOf). */
  private elsewhere: { topology: Topology; counts: Map<string, number> } | undefined;
  /** The topology service clients that are not members ask (with a remote only). */
  private topologyService: PID | undefined;
  private state: 'starting' | 'running' | 'stopping' | 'stopped' = 'starting';
  private introspection: ClusterIntrospection | undefined = undefined;
  /** The member's tracer and meter. */
  private readonly telemetry: ClusterTelemetry;
  /** The member's instruments (undefined when no meter provider is registered). */
  private readonly metrics: ClusterMetrics | undefined;
  /** Grain sends that could not be delivered, logged as counted summaries. */
  private readonly sendFailures: LogThrottle;
  private readonly readinessChecks = new Map<string, HealthCheck>();
  private leaseLosses = 0;
  /** Shard events held while start runs (see emitShardEvent); undefined once delivered. */
  private startShardEvents: Array<() => void> | undefined = [];
  private readonly releases = new Map<string, Map<string, number>>();
  /** The ops HTTP server (`/livez`, `/readyz`, `/startupz`, `/metrics`), if started. */
  readonly ops: OpsServer | undefined;

  /** Builds the whole member in one pass: ownership, caller, hosted kinds (nothing joined). */
  private constructor(init: ClusterInit) {
    const { options, logger, system } = init;
    this.name = options.name;
    this.id = init.id;
    this.address = init.address;
    this.provider = options.provider;
    this.system = system;
    this.options = options;
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
    this.shardCounts = new Map(kinds.map((k) => [k.name, k.shards.shardCount]));
    this.kindShards = Object.fromEntries(kinds.map((k) => [k.name, k.shards]));
    this.events = new TypedEvents((err) =>
      this.logger.error({ err }, 'cluster event listener threw'),
    );
    this.ownership = new ShardOwnership(
      options.provider,
      init.id,
      kinds,
      {
        acquired: (e) => {
          this.hosted.shardAcquired(e.kind, e.shard);
          this.reminderService?.acquired(e.kind, e.shard, e.epoch);
          this.emitShardEvent('shard-acquired', e);
        },
        released: (e) => {
          this.countRelease(e.kind, e.reason);
          this.hosted.shardReleased(e);
          this.reminderService?.released(e.kind, e.shard);
          this.emitShardEvent('shard-released', e);
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
      shardCountOf: (kind) => this.shardCountOf(kind),
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
        request: (kind, id, message, o) => this.caller.request(kind, id, message, o, undefined),
      });
      this.reminderService = service;
      services.reminders = (kind, id) => service.handle(kind, id);
    }
    this.ownership.onBeforeRelease((kind, shard) => this.hosted.drain(kind, shard));
  }

  /**
   * Validates the options, joins the cluster and claims the shards this member should own;
   * resolves once those first claims are answered (at most START_CLAIMS_WAIT_MS, 5 s, after
   * joining: a claim still unanswered then goes on in the background), so a call made right
   * after it finds its grain's shard held rather than being refused and retried.
   */
  static async start(options: StartOptions): Promise<Cluster> {
    // An option given as undefined takes its default, as if it were left out.
    const given = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
    const merged = {
      ...DEFAULT_CLUSTER_OPTIONS,
      ...(given as StartOptions),
      requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_GRAINS_OPTIONS.requestTimeoutMs,
    };
    if (typeof merged.name !== 'string' || merged.name.length === 0 || merged.name.includes('/')) {
      throw new InvalidOptionError('name', "must be a non-empty string without '/'");
    }
    if (!merged.provider) throw new InvalidOptionError('provider', 'is required');
    if (!(Number.isFinite(merged.claimRetryMs) && merged.claimRetryMs > 0)) {
      throw new InvalidOptionError('claimRetryMs', `must be > 0, got ${merged.claimRetryMs}`);
    }
    if (!(merged.requestTimeoutMs > 0)) {
      throw new InvalidOptionError(
        'requestTimeoutMs',
        `must be > 0, got ${merged.requestTimeoutMs}`,
      );
    }
    const overload = resolveOverloadOptions(merged.overload);
    const id = merged.id ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    // Never silent: without a logger, the system's, else warn and above to stderr as JSON.
    const base = merged.logger ?? merged.system?.logger ?? createStderrLogger('warn');
    const logger = withTraceIds(base).child({ node: id });
    // A store that cannot keep what it promises (durability) stops the member before it joins.
    const stateLogger = logger.child({ component: 'state' });
    const reminderStore = merged.reminders?.store;
    reminderStore?.useLogger?.(logger.child({ component: 'reminders' }));
    await Promise.all([
      ...(merged.stateStores ?? []).map((store) => {
        store.useLogger?.(stateLogger);
        return store.open?.();
      }),
      reminderStore?.open?.(),
    ]);
    const ops =
      merged.ops === undefined
        ? undefined
        : await OpsServer.start(merged.ops, logger.child({ component: 'ops' }));
    const ownsSystem = merged.system === undefined;
    const system = merged.system ?? new ActorSystem({ name: merged.name, logger });
    let cluster: Cluster | undefined;
    try {
      const remote = merged.remote;
      if (remote && system.remote === undefined) {
        await new Remote(system).start({ ...remote, clusterName: merged.name, memberId: id });
      }
      const address =
        merged.address ??
        (system.address === 'nonhost' ? undefined : system.address) ??
        (remote ? `${remote.advertisedHost ?? remote.host}:${remote.port}` : 'nonhost');
      cluster = new Cluster({
        id,
        address,
        system,
        ownsSystem,
        options: merged,
        overload,
        logger,
        ops,
      });
      ops?.setHealth(cluster);
      await cluster.join();
      cluster.deliverStartShardEvents();
      return cluster;
    } catch (err) {
      // Bad kinds, an insecure remote or a failed join: nothing may keep running.
      cluster?.hosted.close();
      cluster?.metrics?.close();
      cluster?.load.close();
      cluster?.caller.close();
      if (ownsSystem) await system.shutdown();
      await ops?.close();
      throw err;
    }
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
      checkIdentity(identity);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    return this.caller.request<T>(kind, identity, message, options, undefined);
  }

  /**
   * Whether a grain call with this deadline (`timeoutMs`, default requestTimeoutMs) made now can
   * be answered in time: false with maxOutstandingCalls in flight (the call would fail at once
   * with OverloadedError), or when its deadline is shorter than this member, saturated by its
   * own calls, makes a call wait (twice its event-loop delay, with 256 or more calls in flight):
   * the call would most likely miss its deadline after costing its send, its timer and its
   * failure (docs/overload.md). It allocates and counts nothing. A server offered more than it
   * can call should ask before it does the work of a request and shed the request at once
   * when this is false: a promise per refused call costs as much as the calls it can finish.
   */
  canCall(timeoutMs?: number): boolean {
    return this.caller.canCall(timeoutMs);
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
    checkIdentity(identity);
    this.caller.send(kind, identity, message, undefined, options?.sender);
  }

  /**
   * The durable reminders and one-off jobs of grain `kind/identity`, from anywhere (the grain
   * itself uses `ctx.reminders`): stored before each call resolves, fired by the owner of the
   * grain's shard, which activates the grain if it is passivated.
   * @throws RemindersNotConfiguredError when the cluster was started without `reminders`.
   * @example
   * await cluster.reminders('invoice', 'inv-7').set('remind', { dueInMs: 86_400_000 });
   */
  reminders(kind: string, identity: string): GrainReminders {
    this.assertRunning('reminders');
    if (!this.reminderService) throw new RemindersNotConfiguredError();
    return this.reminderService.handle(kind, identity);
  }

  /** Counters of the reminders this member fired since start (undefined without reminders). */
  reminderStats(): ReminderStats | undefined {
    return this.reminderService?.stats();
  }

  /**
   * The member's OpenTelemetry meter (undefined when no meter provider is registered): parts
   * built on the cluster (pool clients) record their instruments on it.
   */
  get meter(): Meter | undefined {
    return this.telemetry.meter;
  }

  /** Live grain activations on this member (of one kind, or all). */
  activationCount(kind?: string): number {
    return this.hosted.activationCount(kind);
  }

  /**
   * Turns on this member that ran longer than their kind's `longTurnMs`, and that were found
   * stuck past its `turnTimeoutMs`, since start (of one kind, or all).
   */
  turnStats(kind?: string): TurnStats {
    return this.hosted.turnStats(kind);
  }

  /**
   * Overload figures of this member as caller and as owner: calls in flight and pending, whether
   * it sheds load, refusals by limit, expired work dropped by stage, retries (docs/overload.md).
   */
  overloadStats(): OverloadStats {
    return this.overloadFigures('stats');
  }

  /** overloadStats for one reader of the run-queue delay maximum (each resets its own). */
  private overloadFigures(reader: DelayReader): OverloadStats {
    const c = this.counters;
    const load = this.load;
    const expired = this.system.expired;
    return {
      outstanding: c.outstanding,
      pending: load.pending,
      shedding: load.shedding,
      sheddingEpisodes: load.episodes,
      runQueueDelayMs: load.takeMaxDelay(reader),
      refused: { maxOutstandingCalls: c.refusedOutstanding, ...load.refused },
      heldBack: c.heldBack,
      drops: {
        send: c.droppedBeforeSend + expired.beforeSend,
        arrival: expired.onArrival,
        mailbox: c.droppedInMailbox,
        reply: c.droppedReplies,
      },
      retries: { spent: this.caller.budget.spent, refusedByBudget: this.caller.budget.refused },
    };
  }

  /**
   * True while this member sheds load: its run queue stayed above what its calls' deadlines allow
   * (loadShedding.targetMs at least) for an interval, and it refuses new calls it cannot serve in time. What a readiness probe reports.
   */
  isOverloaded(): boolean {
    return this.load.shedding;
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
    const own = this.shardCounts.get(kind);
    if (own !== undefined) return own;
    // A kind hosted elsewhere: its hosts say how many shards it has. Looked up in a table built
    // once per topology, not by a pass over the members: a caller asks on every call whose
    // grain reference is not cached (more than 10,000 identities in use), and at 1,000 members a
    // pass costs as much as the rest of the call.
    let table = this.elsewhere;
    if (table?.topology !== this.current) {
      const counts = new Map<string, number>();
      for (const m of this.current.members) {
        for (const [k, shards] of Object.entries(m.kindShards ?? {})) {
          if (shards && !counts.has(k)) counts.set(k, shards.shardCount);
        }
      }
      table = this.elsewhere = { topology: this.current, counts };
    }
    return table.counts.get(kind) ?? this.options.shardCount;
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
   * Read-only views of this member (its report, where a grain lives here, served-turn
   * statistics) and operator actions, for the admin API. Not on the call path.
   */
  introspect(): ClusterIntrospection {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- getters below read live fields
    const cluster = this;
    return (this.introspection ??= new ClusterIntrospection(
      {
        id: this.id,
        address: this.address,
        get topology() {
          return cluster.current;
        },
        get self() {
          return cluster.self;
        },
        running: () => this.state,
        leaseValid: () => this.ownership.leaseValid(),
        fenced: () => this.ownership.fenced,
        shardCountOf: (kind) => this.shardCountOf(kind),
        shardOf: (kind, identity) => this.shardOf(kind, identity),
        epochOf: (kind, shard) => this.epochOf(kind, shard),
        heldShards: (kind) => this.heldShards(kind),
        now: () => this.system.clock.now(),
        reminders: () => {
          const service = this.reminderService;
          return service === undefined
            ? undefined
            : { kinds: service.summary(), stats: service.stats() };
        },
      },
      this.hosted,
    ));
  }

  /**
   * Registers a drain hook: before this member releases a shard (rebalance or graceful shutdown)
   * every hook runs and must settle. Returns a function that removes the hook.
   */
  onBeforeRelease(hook: BeforeReleaseHook): () => void {
    return this.ownership.onBeforeRelease(hook);
  }

  /**
   * Adds a readiness check: while it returns a reason (not undefined), `/readyz` answers 503
   * with it (load shedding, a dependency of the application). Returns a function that removes
   * it.
   */
  addReadinessCheck(name: string, check: HealthCheck): () => void {
    this.readinessChecks.set(name, check);
    return () => this.readinessChecks.delete(name);
  }

  /** `/startupz`: healthy once the member has joined. */
  startup(): HealthReport {
    return reportOf({ member: this.state === 'starting' ? 'joining' : undefined });
  }

  /**
   * `/readyz`: healthy while the member is joined and running, its lease provably alive, and
   * no readiness check objects. Not ready while it sheds load, from the moment a graceful leave starts (before the
   * member stops taking calls), while fenced, and before the join.
   */
  readiness(): HealthReport {
    const state = this.state;
    const checks: Record<string, string | undefined> = {
      member:
        state === 'running'
          ? undefined
          : state === 'starting'
            ? 'joining'
            : state === 'stopping'
              ? 'leaving'
              : 'stopped',
      lease:
        state !== 'running'
          ? undefined
          : this.ownership.fenced
            ? 'fenced: lease lost, re-registering'
            : this.ownership.leaseValid()
              ? undefined
              : 'lease not provably alive',
      // Shedding: it refuses new calls and activations early (docs/overload.md).
      overload: this.load.shedding
        ? 'shedding load: run-queue delay above what the calls admitted allow (loadShedding)'
        : undefined,
    };
    for (const [name, check] of this.readinessChecks) {
      try {
        checks[name] = check();
      } catch (err) {
        checks[name] = `check threw: ${(err as Error).message}`;
      }
    }
    return reportOf(checks);
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
        this.hosted.beginLeaving();
        await this.provider.markLeaving().catch((err) => {
          this.logger.warn({ err }, 'could not mark the member leaving; releasing anyway');
        });
        await this.ownership.releaseAll();
      }
      this.ownership.stop();
      this.reminderService?.stop();
      // Fires claimed before the hand-over are delivered to the new owners, not cut off.
      if (graceful) await this.reminderService?.settled();
      await this.hosted.deactivateAll('shutdown');
      await this.provider.leave();
    } finally {
      for (const off of this.unsubscribe) off();
      this.state = 'stopped';
      this.events.clear();
      if (this.topologyService !== undefined) this.system.root.stop(this.topologyService);
      this.hosted.close();
      this.sendFailures.close();
      this.metrics?.close();
      this.load.close();
      this.caller.close();
      if (this.ownsSystem) await this.system.shutdown();
      await this.ops?.close();
    }
  }

  private async join(): Promise<void> {
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
        kinds: [...this.shardCounts.keys()],
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
        () => Object.fromEntries(this.shardCounts),
      );
    }
    await this.ownership.claimsAnswered(START_CLAIMS_WAIT_MS);
  }

  /**
   * Emits a shard event, or holds it while start is still running: start waits for the first
   * claims, so their events would otherwise fire before the caller of start could subscribe.
   */
  private emitShardEvent<K extends 'shard-acquired' | 'shard-released'>(
    event: K,
    payload: ClusterEvents[K],
  ): void {
    if (this.startShardEvents === undefined) this.events.emit(event, payload);
    else this.startShardEvents.push(() => this.events.emit(event, payload));
  }

  /**
   * Delivers the shard events held during start in a later macrotask, so listeners attached
   * right after `await Cluster.start(...)` (in its continuation) see every acquisition, in
   * order, as they did when claims were only made after start returned. Later events go straight
   * to the listeners once the held ones are out.
   */
  private deliverStartShardEvents(): void {
    setImmediate(() => {
      const held = this.startShardEvents ?? [];
      this.startShardEvents = undefined;
      for (const emit of held) emit();
    });
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

  /** Throws if the member has shut down (for methods added by other parts of the package). */
  protected assertRunning(operation: string): void {
    if (this.state === 'stopped') throw new ClusterStoppedError(operation);
  }
}

/**
 * Longest wait of Cluster.start for the member's first claims to be answered: long enough for a
 * loaded etcd, short enough that a member whose store stalls still starts (and claims later).
 */
export const START_CLAIMS_WAIT_MS = 5_000;

/** Longest grain identity, in UTF-8 bytes: it travels in every call's target id. */
export const MAX_IDENTITY_BYTES = 1024;

/**
 * A grain identity is a non-empty string of at most MAX_IDENTITY_BYTES.
 * @throws InvalidArgumentError naming `identity`.
 */
function checkIdentity(identity: unknown): void {
  if (typeof identity !== 'string' || identity.length === 0) {
    throw new InvalidArgumentError('identity', 'must be a non-empty string');
  }
  // At most 3 bytes per UTF-16 unit: short ids need no count.
  if (
    identity.length * 3 > MAX_IDENTITY_BYTES &&
    Buffer.byteLength(identity) > MAX_IDENTITY_BYTES
  ) {
    throw new InvalidArgumentError('identity', `is over ${MAX_IDENTITY_BYTES} bytes`);
  }
}

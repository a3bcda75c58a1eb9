import { randomBytes } from 'node:crypto';
import type { Meter } from '@opentelemetry/api';
import { hostname } from 'node:os';
import { ActorSystem, Remote, createStderrLogger, withTraceIds } from '@granary/core';
import { ClusterIntrospection } from './cluster-introspection';
import { ClusterMember } from './cluster-member';
import {
  memberAddress,
  openStores,
  resolveStartOptions,
  type ClusterInit,
  type StartOptions,
} from './cluster-start';
import { ClusterStoppedError } from './errors';
import type { GrainCallOptions, GrainSendOptions } from './grains/grain';
import { checkIdentity } from './grains/grain-identity';
import type { TurnStats } from './grains/hosted-grains';
import { resolveOverloadOptions } from './overload/overload-options';
import type { OverloadStats } from './overload/overload-stats';
import type { ClusterEvents } from './membership/cluster-events';
import type { BeforeReleaseHook } from './membership/shard-ownership';
import type { Member, Topology } from './membership/topology';
import { RemindersNotConfiguredError } from './reminders/errors';
import type { GrainReminders } from './reminders/reminder';
import type { ReminderStats } from './reminders/reminder-stats';
import type { HealthCheck, HealthReport, HealthSource } from './ops/health';
import { OpsServer } from './ops/ops-server';
import { ReadinessChecks } from './ops/readiness-checks';

export { START_CLAIMS_WAIT_MS } from './cluster-start';
export { MAX_IDENTITY_BYTES } from './grains/grain-identity';

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
export class Cluster extends ClusterMember implements HealthSource {
  private introspection: ClusterIntrospection | undefined = undefined;
  private readonly readinessChecks = new ReadinessChecks();
  /** The leave under way or done (shutdown() called twice waits for the one leave). */
  private leaving: Promise<void> | undefined;

  private constructor(init: ClusterInit) {
    super(init);
  }

  /**
   * Validates the options, joins the cluster and claims the shards this member should own;
   * resolves once those first claims are answered (at most START_CLAIMS_WAIT_MS, 5 s, after
   * joining: a claim still unanswered then goes on in the background), so a call made right
   * after it finds its grain's shard held rather than being refused and retried.
   */
  static async start(options: StartOptions): Promise<Cluster> {
    const merged = resolveStartOptions(options);
    const overload = resolveOverloadOptions(merged.overload);
    const id = merged.id ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    // Never silent: without a logger, the system's, else warn and above to stderr as JSON.
    const base = merged.logger ?? merged.system?.logger ?? createStderrLogger('warn');
    const logger = withTraceIds(base).child({ node: id });
    await openStores(merged, logger);
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
      const address = memberAddress(merged, system);
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
      cluster.shardEvents.deliverLater();
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
   * @throws RemindersNotConfiguredError when the cluster was started without `reminders`;
   *   InvalidArgumentError for an identity no call may name (see `request`).
   * @example
   * await cluster.reminders('invoice', 'inv-7').set('remind', { dueInMs: 86_400_000 });
   */
  reminders(kind: string, identity: string): GrainReminders {
    this.assertRunning('reminders');
    if (!this.reminderService) throw new RemindersNotConfiguredError();
    // A reminder of an identity no call may name would fire into the void on every tick.
    checkIdentity(identity);
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
        loadedReminders: (kind, limit, after) => this.reminderService?.loadedOf(kind, limit, after),
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
    return this.readinessChecks.add(name, check);
  }

  /** `/startupz`: healthy once the member has joined. */
  startup(): HealthReport {
    return this.readinessChecks.startup(this.state);
  }

  /**
   * `/readyz`: healthy while the member is joined and running, its lease provably alive, and
   * no readiness check objects. Not ready while it sheds load, from the moment a graceful leave starts (before the
   * member stops taking calls), while fenced, and before the join.
   */
  readiness(): HealthReport {
    return this.readinessChecks.readiness(this.state, this.ownership, this.load);
  }

  /**
   * Leaves the cluster. Graceful (default): status `leaving`, drain and release every shard, then
   * delete the member. Not graceful: delete the member and its claims at once. A call while a
   * leave is under way resolves when that leave ends. Logged at info when it starts (with
   * `reason`, e.g. the signal installShutdownSignals got) and when it ends; a failure at error.
   */
  shutdown(options: { graceful?: boolean; reason?: string } = {}): Promise<void> {
    if (this.leaving !== undefined) return this.leaving;
    if (this.state === 'stopping' || this.state === 'stopped') return Promise.resolve();
    this.leaving = this.leave(options.graceful ?? true, options.reason);
    return this.leaving;
  }

  private async leave(graceful: boolean, reason: string | undefined): Promise<void> {
    this.state = 'stopping';
    const started = Date.now();
    this.logger.info(
      {
        member: this.id,
        graceful,
        ...(reason === undefined ? {} : { reason }),
        activations: this.hosted.activationCount(),
      },
      graceful
        ? 'leaving the cluster: draining grains and handing over shards'
        : 'leaving the cluster at once',
    );
    try {
      await this.leaveSteps(graceful);
    } catch (err) {
      this.logger.error({ err, member: this.id }, 'leaving the cluster failed');
      throw err;
    }
    this.logger.info({ member: this.id, ms: Date.now() - started }, 'left the cluster');
  }

  private async leaveSteps(graceful: boolean): Promise<void> {
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
      if (this.reminderOps !== undefined) this.system.root.stop(this.reminderOps);
      this.hosted.close();
      this.sendFailures.close();
      this.metrics?.close();
      this.load.close();
      this.caller.close();
      if (this.ownsSystem) await this.system.shutdown();
      await this.ops?.close();
    }
  }

  /** Throws if the member has shut down (for methods added by other parts of the package). */
  protected assertRunning(operation: string): void {
    if (this.state === 'stopped') throw new ClusterStoppedError(operation);
  }
}

import { InvalidArgumentError } from '@granary/core';
import { rejectUnknownOptions } from '@granary/core/internal';
import {
  Cluster,
  GrainError,
  ThreadCrashedError,
  ThreadPoolClosedError,
  ThreadTaskAbortedError,
  type GranaryClient,
  type GrainCallOptions,
  type GrainContext,
} from '@granary/cluster';
import { PoolClientOptionsError, PoolSaturatedError, PoolUnavailableError } from '../errors';
import { GrainPoolClient } from './grain-pool-client';
import { place } from './internal/placement';
import { UnreachableHosts } from './internal/unreachable-hosts';
import { REQUEST_VIA, SEND_VIA, type PoolRouting, type WorkerCaller } from './internal/pool-call';
import { observePool, type PoolCounters } from './pool-metrics';
import {
  POOL_CLIENT_OPTION_KEYS,
  resolvePoolClientOptions,
  type ClusterPoolStats,
  type PoolClientOptions,
} from './pool-client-options';
import {
  control,
  INVENTORY_ID,
  memberKind,
  type Inventory,
  type WorkerStats,
} from './internal/pool-protocol';

/**
 * What a PoolClient calls the workers through: a member (`Cluster`) or a `GranaryClient` (a web
 * server or a CLI that is not a member). Both route calls to the worker grains and know the
 * topology; only a member has a meter for the pool's metrics.
 */
export type PoolCaller = Cluster | GranaryClient;

interface Slot {
  readonly index: number;
  readonly host: string;
  readonly kind: string;
  inFlight: number;
}

/**
 * Codes of a GrainError that no worker answered: its thread crashed, was stopped at the deadline,
 * or was closed with its member. They count as failed, not as a worker's (error) answer.
 */
const WORKER_LOST: ReadonlySet<string | undefined> = new Set([
  ThreadCrashedError.code,
  ThreadTaskAbortedError.code,
  ThreadPoolClosedError.code,
]);

/**
 * Calls a cluster pool's workers from any member. It learns which workers run where from each
 * hosting member, places missing ones on the members with the fewest (each member gets
 * ⌊N/M⌋ or ⌈N/M⌉; workers on live members stay put), and sends each call to the worker with
 * the fewest calls outstanding from this caller. When every worker is at `maxInFlight`,
 * the call fails at once with `PoolSaturatedError` (backpressure, ergo's act.Pool 503).
 *
 * Placement is recomputed after every topology change, by whichever client calls next; two
 * clients racing may start one worker twice for a moment, and the next refresh ends the copy.
 *
 * @example
 * const pool = PoolClient.get(cluster, 'resize');
 * const small = await pool.request({ image }, { timeoutMs: 2000 });
 */
export class PoolClient implements PoolCounters, PoolRouting {
  private static readonly clients = new WeakMap<PoolCaller, Map<string, PoolClient>>();
  private slots: Slot[] = [];
  /** The topology version the slots were placed in: a newer one places them again. */
  private placedIn = -1;
  private maxInFlight = 1;
  private stale = true;
  private refreshing: Promise<void> | undefined;
  /** The placement in flight is an audit (auditIfDue): calls go on through the current one. */
  private auditing = false;
  /** When the last placement started (performance.now()). */
  private placedAt = -Infinity;
  private cursor = 0;
  private readonly options: Required<PoolClientOptions>;
  /** Members whose link this caller's actor system saw break. */
  private readonly unreachable: UnreachableHosts;
  /** Calls answered by a worker (PoolCounters). */
  ok = 0;
  /** Calls that failed otherwise (PoolCounters). */
  failed = 0;
  /** Calls refused as saturated (PoolCounters). */
  saturated = 0;

  private constructor(
    private readonly cluster: PoolCaller,
    readonly name: string,
    options: PoolClientOptions,
  ) {
    this.options = resolvePoolClientOptions(options);
    this.unreachable = new UnreachableHosts(cluster.system);
    const meter = cluster instanceof Cluster ? cluster.meter : undefined;
    if (meter !== undefined) observePool(meter, this);
  }

  /**
   * True when the slots must be placed (again): none yet, a failure, a topology change, or a
   * placement running (not an audit): the slots it replaces may name a member that is gone.
   */
  private get needsPlacing(): boolean {
    return (
      (this.refreshing !== undefined && !this.auditing) ||
      this.stale ||
      this.slots.length === 0 ||
      this.cluster.topology.version !== this.placedIn
    );
  }

  /** Calls outstanding now (PoolCounters). */
  inFlight(): number {
    let n = 0;
    for (const s of this.slots) n += s.inFlight;
    return n;
  }

  /**
   * The client of pool `name` through this member or GranaryClient: one per caller and pool
   * (placement, counters and metrics are shared), made with the options of the first call.
   * A later call with no options, or the same values, returns it. Inside a grain, pass its
   * context: `PoolClient.get(ctx, name)` uses the member's client, and each call goes through
   * `ctx`, carrying the grain's deadline and call chain (a GrainPoolClient).
   * @throws InvalidArgumentError when `caller` is none of these.
   * @throws PoolClientOptionsError when a later call gives an option a different value: it
   *   could not take effect on the existing client.
   */
  static get(ctx: GrainContext, name: string, options?: PoolClientOptions): GrainPoolClient;
  static get(cluster: PoolCaller, name: string, options?: PoolClientOptions): PoolClient;
  static get(
    caller: PoolCaller | GrainContext,
    name: string,
    options: PoolClientOptions = {},
  ): PoolClient | GrainPoolClient {
    rejectUnknownOptions('PoolClient.get', options, POOL_CLIENT_OPTION_KEYS);
    if (!isGrainContext(caller)) return PoolClient.of(caller, name, options);
    // A grain's context: its member's client places, the grain's context calls.
    const member: unknown = caller.cluster;
    if (!(member instanceof Cluster)) {
      throw new InvalidArgumentError(
        'ctx',
        "a grain context's cluster must be the member hosting the grain (a Cluster)",
      );
    }
    return new GrainPoolClient(PoolClient.of(member, name, options), caller);
  }

  private static of(cluster: PoolCaller, name: string, options: PoolClientOptions): PoolClient {
    let byName = PoolClient.clients.get(cluster);
    if (!byName) PoolClient.clients.set(cluster, (byName = new Map()));
    let client = byName.get(name);
    if (!client) byName.set(name, (client = new PoolClient(cluster, name, options)));
    else client.checkSameOptions(options);
    return client;
  }

  /** Refuses an option given a value other than this client's (see {@link PoolClient.get}). */
  private checkSameOptions(options: PoolClientOptions): void {
    for (const key of Object.keys(POOL_CLIENT_OPTION_KEYS) as Array<keyof PoolClientOptions>) {
      const given = options[key];
      if (given !== undefined && given !== this.options[key]) {
        throw new PoolClientOptionsError(this.name, key, given, this.options[key]);
      }
    }
  }

  /**
   * Sends `message` to the least busy worker and resolves with its reply.
   * @throws PoolSaturatedError at once when every worker has `maxInFlight` calls outstanding;
   *   PoolUnavailableError when no member hosts the pool; the cluster's errors otherwise.
   */
  request<T = unknown>(message: unknown, options?: GrainCallOptions): Promise<T> {
    return this[REQUEST_VIA]<T>(this.cluster, message, options);
  }

  /** `request` through `via` (this client's caller, or a calling grain's context). */
  async [REQUEST_VIA]<T>(
    via: WorkerCaller,
    message: unknown,
    options?: GrainCallOptions,
  ): Promise<T> {
    await this.placed();
    let slot: Slot;
    try {
      slot = this.pick();
    } catch (err) {
      if (PoolSaturatedError.is(err)) this.saturated++;
      else this.failed++;
      throw err;
    }
    slot.inFlight++;
    try {
      const reply = await via.request<T>(slot.kind, String(slot.index), message, options);
      this.ok++;
      return reply;
    } catch (err) {
      if (GrainError.is(err) && !WORKER_LOST.has(err.originalCode)) this.ok++;
      else {
        this.failed++;
        this.stale = true; // placement or transport: look again
      }
      throw err;
    } finally {
      slot.inFlight--;
    }
  }

  /** Sends `message` to the least busy worker without a reply. */
  send(message: unknown): Promise<void> {
    return this[SEND_VIA](this.cluster, message);
  }

  /** `send` through `via` (this client's caller, or a calling grain's context). */
  async [SEND_VIA](via: WorkerCaller, message: unknown): Promise<void> {
    await this.placed();
    const slot = this.pick();
    via.send(slot.kind, String(slot.index), message);
  }

  /** Worker index → member id, as this client last placed them. */
  placement(): Map<number, string> {
    return new Map(this.slots.map((s) => [s.index, s.host]));
  }

  /** Per-worker and total statistics, asked from the workers themselves. */
  async stats(): Promise<ClusterPoolStats> {
    await this.placed();
    const timeoutMs = this.options.controlTimeoutMs;
    const workers = await Promise.all(
      this.slots.map((s) =>
        this.cluster.request<WorkerStats>(s.kind, String(s.index), control('stats'), { timeoutMs }),
      ),
    );
    const perMember: Record<string, number> = {};
    for (const w of workers) perMember[w.member] = (perMember[w.member] ?? 0) + 1;
    return {
      workers,
      calls: workers.reduce((n, w) => n + w.calls, 0),
      errors: workers.reduce((n, w) => n + w.errors, 0),
      perMember,
    };
  }

  /** Changes the number of workers on every hosting member, then places them. */
  async resize(size: number): Promise<number> {
    if (!Number.isInteger(size) || size < 0) {
      throw new InvalidArgumentError('size', `must be an integer >= 0, got ${size}`);
    }
    const now = this.cluster instanceof Cluster ? this.cluster.system.clock.now() : Date.now();
    await this.setSize(this.hosts(), size, now);
    this.stale = true;
    await this.refresh();
    return this.slots.length;
  }

  /** Places when needed, and again when that placement was out of date; else audits if due. */
  private async placed(): Promise<void> {
    if (!this.needsPlacing) return this.auditIfDue();
    await this.refresh();
    // The topology moved, or an activation failed, while it ran: it may name a member now gone.
    if (this.needsPlacing) await this.refresh();
  }

  /** Learns where workers run and places the missing ones (single flight). */
  refresh(): Promise<void> {
    this.refreshing ??= this.place().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async setSize(hosts: string[], size: number, sizeAt: number): Promise<void> {
    const timeoutMs = this.options.controlTimeoutMs;
    const resize = control('resize', size, sizeAt);
    await Promise.all(
      hosts.map((h) =>
        this.cluster.request(memberKind(this.name, h), INVENTORY_ID, resize, { timeoutMs }),
      ),
    );
  }

  private hosts(): string[] {
    const topology = this.cluster.topology;
    const hosts = topology.members
      .filter((m) => m.status === 'up' && m.kinds.includes(memberKind(this.name, m.id)))
      .map((m) => m.id)
      .sort();
    // An unreachable member's inventory would hold the placement for controlTimeoutMs.
    const down = this.unreachable.ids(topology);
    const reachable = hosts.filter((h) => !down.has(h));
    return reachable.length > 0 ? reachable : hosts;
  }

  /**
   * Places the workers again in the background once the placement is `auditIntervalMs` old:
   * the inventories show the copies started since (see the option). Calls do not wait for it.
   */
  private auditIfDue(): void {
    if (this.refreshing !== undefined) return;
    if (performance.now() - this.placedAt < this.options.auditIntervalMs) return;
    this.auditing = true;
    this.refresh()
      .catch(() => (this.stale = true))
      .finally(() => (this.auditing = false));
  }

  private async place(): Promise<void> {
    this.placedAt = performance.now();
    this.stale = false;
    this.placedIn = this.cluster.topology.version;
    const timeoutMs = this.options.controlTimeoutMs;
    const inventory = control('inventory');
    const answers = await Promise.all(
      this.hosts().map((h) =>
        this.cluster
          .request<Inventory>(memberKind(this.name, h), INVENTORY_ID, inventory, { timeoutMs })
          .then((inv) => [h, inv] as const)
          .catch(() => undefined),
      ),
    );
    const live = answers.filter((a) => a !== undefined);
    if (live.length === 0) {
      this.stale = true;
      throw new PoolUnavailableError(this.name);
    }
    // The newest size setting wins; members that missed it (e.g. joined later) are told.
    const first = live.reduce((a, b) => (b[1].sizeAt > a[1].sizeAt ? b : a))[1];
    const behind = live.filter(([, inv]) => inv.size !== first.size).map(([h]) => h);
    if (behind.length > 0) await this.setSize(behind, first.size, first.sizeAt);
    const maxPerNode = typeof first.maxPerNode === 'number' ? first.maxPerNode : Infinity; // JSON: null
    this.maxInFlight = first.maxInFlight;
    const plan = place(
      first.size,
      live.map(([h]) => h),
      new Map(live.map(([h, inv]) => [h, inv.workers])),
      maxPerNode,
    );
    const retired = plan.retire.map((r) =>
      this.cluster
        .request(memberKind(this.name, r.host), String(r.index), control('retire'), { timeoutMs })
        .catch(() => (this.stale = true)),
    );
    const previous = new Map(this.slots.map((s) => [`${s.host}/${s.index}`, s]));
    this.slots = [...plan.assignment]
      .sort(([a], [b]) => a - b)
      .map(([index, host]) => {
        const kept = previous.get(`${host}/${index}`);
        return kept ?? { index, host, kind: memberKind(this.name, host), inFlight: 0 };
      });
    await Promise.all([
      ...retired,
      ...plan.activate.map((a) =>
        this.cluster
          .request(memberKind(this.name, a.host), String(a.index), control('ping'), { timeoutMs })
          .catch(() => (this.stale = true)),
      ),
    ]);
  }

  /** The worker with the fewest calls outstanding below the cap, rotating among ties. */
  private pick(): Slot {
    const slots = this.slots;
    const n = slots.length;
    const down = this.unreachable.ids(this.cluster.topology);
    let best: Slot | undefined;
    for (let k = 0; k < n; k++) {
      const slot = slots[(this.cursor + k) % n]!;
      if (
        slot.inFlight < this.maxInFlight &&
        (best === undefined || rank(slot, down) < rank(best, down))
      ) {
        best = slot;
        if (slot.inFlight === 0 && !down.has(slot.host)) break;
      }
    }
    if (best === undefined) {
      throw new PoolSaturatedError(this.name, n, this.maxInFlight, 'size, maxInFlight');
    }
    this.cursor = (slots.indexOf(best) + 1) % n;
    return best;
  }
}

/** A grain's context (identity and member), not a member or a GranaryClient (which have ids). */
function isGrainContext(caller: PoolCaller | GrainContext): caller is GrainContext {
  const c = caller as Partial<GrainContext>;
  return typeof c.identity === 'string' && typeof c.cluster === 'object' && c.cluster !== null;
}

/** Least busy first; a worker on an unreachable member only when no other can take the call. */
function rank(slot: Slot, down: ReadonlySet<string>): number {
  return down.has(slot.host) ? Number.MAX_SAFE_INTEGER : slot.inFlight;
}

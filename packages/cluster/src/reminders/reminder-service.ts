import { InvalidOptionError, PID, type ActorSystem, type TimerHandle } from '@granary/core';
import type { GrainCallOptions } from '../grains/grain';
import type { ClusterLogger } from '../internal/logger';
import { ReminderMetrics } from '../telemetry/reminder-metrics';
import { activeTraceparent } from '../telemetry/reminder-spans';
import type { ClusterTelemetry } from '../telemetry/telemetry';
import type { Member } from '../membership/topology';
import { ReminderFencedError } from './errors';
import { GrainRemindersHandle, type RemindersBackend } from './grain-reminders';
import { LiveReminder, STORE_RETRY_MS, type ReminderHost } from './live-reminder';
import type { GrainReminders, JobOutcome, ReminderFire } from './reminder';
import type { ClaimResult, ReminderSpec, ReminderStore, StoredReminder } from './reminder-store';
import { queueClaim } from './internal/claim-batch';
import { StoreClock } from './internal/store-clock';
import { FireDelivery } from './internal/fire-delivery';
import { REMINDERS_ACTOR, spawnRefreshActor, type RefreshMessage } from './internal/refresh-actor';
import {
  listLoaded,
  loadedByKind,
  summarize,
  type LoadedReminders,
  type ReminderCursor,
  type ReminderSummary,
} from './internal/loaded-summary';
import { loadBatches, loadFromStore, type ShardReminders } from './internal/shard-loads';
import { ReminderCounters, type ReminderStats } from './reminder-stats';
import type { RemindersOptions } from './reminders-options';

/** Deadline of telling a shard's owner that a reminder changed. */
const NOTIFY_TIMEOUT_MS = 2000;

/** What the member tells its reminder service. */
export interface ReminderServiceDeps {
  readonly system: ActorSystem;
  readonly options: Required<RemindersOptions>;
  readonly selfId: string;
  readonly logger: ClusterLogger;
  /** Spans per fire when tracing; the reminder instruments when a meter is registered. */
  readonly telemetry: ClusterTelemetry;
  shardOf(kind: string, id: string): number;
  /** The shard's desired owner under the member's topology. */
  ownerOf(kind: string, shard: number): Member | undefined;
  /** True when `address` is a member's in the member's topology. */
  isMember(address: string): boolean;
  /** A grain call (the member's caller: the one retry loop). */
  request(kind: string, id: string, message: unknown, options: GrainCallOptions): Promise<unknown>;
}

export type { LoadedReminder, LoadedReminders, ReminderCursor } from './internal/loaded-summary';
export type { ReminderSummary };

const keyOf = (kind: string, shard: number): string => `${kind}/${shard}`;
const fieldOf = (id: string, name: string): string => `${id.length}:${id}${name}`;

/**
 * A member's reminders and jobs: the shards it owns are loaded when acquired (the load fences
 * the shard at the claim's epoch) and dropped when released; each loaded reminder is a
 * LiveReminder on the system's timer wheel. Changes made anywhere are stored first, then told
 * to the shard's owner (this member directly, another through its `$reminders` actor); an owner
 * that misses the message still loads the change with the shard.
 */
export class ReminderService implements ReminderHost, RemindersBackend {
  readonly counters = new ReminderCounters();
  private readonly shards = new Map<string, ShardReminders>();
  private readonly store: ReminderStore;
  /** What fires are planned on: the store's clock (see StoreClock). */
  private readonly time: StoreClock;
  private storeDown = false;
  private stopped = false;
  private readonly actor: PID;
  private readonly fires: FireDelivery;
  private readonly metrics: ReminderMetrics | undefined;
  /** Shards acquired this turn, loaded together on the next (see flushLoads). */
  private toLoad: ShardReminders[] = [];

  constructor(private readonly deps: ReminderServiceDeps) {
    const max = deps.options.maxFiresInFlight;
    if (!(Number.isSafeInteger(max) && max >= 1)) {
      throw new InvalidOptionError(
        'reminders.maxFiresInFlight',
        `must be an integer >= 1, got ${max}`,
      );
    }
    this.store = deps.options.store;
    const store = this.store;
    this.time = new StoreClock(
      deps.system.clock,
      store.time === undefined ? undefined : () => store.time!(),
      deps.logger,
    );
    this.fires = new FireDelivery({
      maxFiresInFlight: max,
      deliveryTimeoutMs: deps.options.deliveryTimeoutMs,
      telemetry: deps.telemetry,
      logger: deps.logger,
      counters: this.counters,
      request: deps.request,
    });
    const meter = deps.telemetry.meter;
    if (meter !== undefined) {
      this.metrics = new ReminderMetrics(meter, this);
      this.counters.histogram = this.metrics.tardiness;
    }
    this.actor = spawnRefreshActor(
      deps.system,
      deps.isMember,
      (m) => this.refresh(m.kind, m.shard, m.id, m.name, undefined),
      deps.logger,
    );
  }

  /** The reminders of grain `kind/id`. */
  handle(kind: string, id: string): GrainReminders {
    return new GrainRemindersHandle(this, kind, id);
  }

  stats(): ReminderStats {
    let loaded = 0;
    for (const s of this.shards.values()) loaded += s.live.size;
    return this.counters.snapshot(loaded);
  }

  /** Per kind, the periodic reminders and the jobs loaded here (the metrics' source). */
  loadedByKind(): Map<string, { reminders: number; jobs: number }> {
    return loadedByKind(this.shards.values());
  }

  /** Per kind: the reminders and jobs loaded here and the earliest next due (epoch ms). */
  summary(): ReminderSummary[] {
    return summarize(this.shards.values(), this.now());
  }

  /**
   * Up to `limit` of the reminders and jobs of `kind` loaded here (the shards this member owns),
   * by identity then name, and how many shards they come from. Read from memory: no store call.
   */
  loadedOf(kind: string, limit: number, after?: ReminderCursor): LoadedReminders {
    return listLoaded(this.shards.values(), kind, limit, this.now(), after);
  }

  // ── shard ownership ──────────────────────────────────────────────────────────────────

  /** This member acquired a shard: load (and fence) its reminders. */
  acquired(kind: string, shard: number, epoch: number): void {
    if (this.stopped) return;
    this.released(kind, shard);
    const s: ShardReminders = {
      kind,
      shard,
      epoch,
      live: new Map(),
      loading: true,
      pending: new Set(),
      batch: [],
    };
    this.shards.set(keyOf(kind, shard), s);
    if (this.toLoad.push(s) === 1) setImmediate(() => this.flushLoads());
  }

  /** This member released or lost a shard: its reminders stop here at once. */
  released(kind: string, shard: number): void {
    const key = keyOf(kind, shard);
    const s = this.shards.get(key);
    if (!s) return;
    this.shards.delete(key);
    for (const r of s.live.values()) r.stop();
    s.live.clear();
  }

  /** Stops every reminder (the member shuts down). */
  stop(): void {
    this.stopped = true;
    this.time.stop();
    this.fires.stop();
    this.metrics?.close();
    for (const s of [...this.shards.values()]) this.released(s.kind, s.shard);
    this.deps.system.root.stop(this.actor);
  }

  /**
   * Resolves when every fire claimed here has been answered or failed (each within
   * `deliveryTimeoutMs`). A graceful leave waits for this before its actor system stops: a tick
   * is claimed once, so a delivery cut short by the shutdown would lose it.
   */
  settled(): Promise<void> {
    return this.fires.settled();
  }

  /** Loads the shards acquired since the last flush (see loadBatches). */
  private flushLoads(): void {
    const toLoad = this.toLoad.filter((s) => this.current(s));
    this.toLoad = [];
    for (const batch of loadBatches(toLoad)) void this.load(batch);
  }

  /** Loads (and fences) shards of one kind; retried while the store is down. */
  private async load(batch: ShardReminders[]): Promise<void> {
    // The first fires are planned on the store's clock, not on this member's.
    await this.time.first;
    let left = batch;
    while ((left = left.filter((s) => this.current(s))).length > 0) {
      try {
        const results = await loadFromStore(this.store, left);
        this.storeUp();
        left.forEach((s, i) => {
          const r = results[i]!;
          if (!this.current(s)) return;
          if (r instanceof Error) this.fencedAtLoad(s, r);
          else this.loaded(s, r);
        });
        return;
      } catch (err) {
        this.counters.storeErrors++;
        this.storeFailed(err);
        await this.sleep(STORE_RETRY_MS);
      }
    }
  }

  private loaded(s: ShardReminders, stored: StoredReminder[]): void {
    s.loading = false;
    for (const r of stored) this.apply(s, r.id, r.name, r);
    const pending = [...s.pending];
    s.pending.clear();
    for (const f of pending) {
      const [id, name] = JSON.parse(f) as [string, string];
      void this.refresh(s.kind, s.shard, id, name, undefined);
    }
  }

  private fencedAtLoad(s: ShardReminders, err: ReminderFencedError): void {
    this.counters.fenced++;
    this.deps.logger.warn({ err }, 'reminders of a shard fenced at load: not firing them');
    this.released(s.kind, s.shard);
  }

  private current(s: ShardReminders): boolean {
    return !this.stopped && this.shards.get(keyOf(s.kind, s.shard)) === s;
  }

  /** Installs, replaces or removes one loaded reminder. */
  private apply(s: ShardReminders, id: string, name: string, r: StoredReminder | undefined): void {
    const f = fieldOf(id, name);
    const live = s.live.get(f);
    if (r === undefined) {
      live?.stop();
      s.live.delete(f);
    } else if (live) live.replace(r);
    else {
      const created = new LiveReminder(this, s.kind, s.shard, r);
      s.live.set(f, created);
      created.plan();
    }
  }

  /** Reads one reminder again (or takes `stored`) if this member has its shard loaded. */
  private async refresh(
    kind: string,
    shard: number,
    id: string,
    name: string,
    stored: StoredReminder | null | undefined,
  ): Promise<boolean> {
    const s = this.shards.get(keyOf(kind, shard));
    if (!s) return false;
    if (s.loading) {
      s.pending.add(JSON.stringify([id, name]));
      return true;
    }
    const r = stored === undefined ? await this.store.get(kind, shard, id, name) : stored;
    if (this.current(s)) this.apply(s, id, name, r ?? undefined);
    return true;
  }

  /** Tells the shard's owner a reminder changed (this member: at once). */
  private async notify(
    kind: string,
    shard: number,
    id: string,
    name: string,
    stored: StoredReminder | null,
  ): Promise<void> {
    await this.refresh(kind, shard, id, name, stored).catch(() => undefined);
    const owner = this.deps.ownerOf(kind, shard);
    if (!owner || owner.id === this.deps.selfId) return;
    const msg: RefreshMessage = { $remindersRefresh: true, kind, shard, id, name };
    try {
      await this.deps.system.root.request(new PID(owner.address, REMINDERS_ACTOR), msg, {
        timeoutMs: NOTIFY_TIMEOUT_MS,
      });
    } catch (err) {
      // Stored already: the owner loads it with the shard at the latest.
      this.deps.logger.debug({ err, kind, id, name }, 'could not tell the owner of a reminder');
    }
  }

  // ── RemindersBackend ─────────────────────────────────────────────────────────────────

  now(): number {
    return this.time.now();
  }

  shardOf(kind: string, id: string): number {
    return this.deps.shardOf(kind, id);
  }

  async put(kind: string, shard: number, id: string, name: string, spec: ReminderSpec) {
    // Each fire's span links to the span that set the schedule.
    const trace = this.deps.telemetry.tracing ? activeTraceparent() : undefined;
    if (trace !== undefined) spec = { ...spec, trace };
    const stored = await this.store.put(kind, shard, id, name, spec);
    await this.notify(kind, shard, id, name, stored);
  }

  async remove(kind: string, shard: number, id: string, name: string): Promise<boolean> {
    const had = await this.store.remove(kind, shard, id, name);
    await this.notify(kind, shard, id, name, null);
    return had;
  }

  list(kind: string, shard: number, id: string): Promise<StoredReminder[]> {
    return this.store.list(kind, shard, id);
  }

  outcome(kind: string, shard: number, id: string, name: string) {
    return this.store.outcome(kind, shard, id, name);
  }

  // ── ReminderHost ─────────────────────────────────────────────────────────────────────

  schedule(delayMs: number, r: LiveReminder): TimerHandle {
    return this.deps.system.timers.schedule(delayMs, r);
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.deps.system.timers.schedule(ms, resolve));
  }

  admit(r: LiveReminder): boolean {
    return this.fires.admit(r);
  }

  release(): void {
    this.fires.release();
  }

  claim(r: LiveReminder, tick: number): Promise<ClaimResult> {
    const s = this.shards.get(keyOf(r.kind, r.shard));
    if (!s) return Promise.reject(new ReminderFencedError(r.kind, r.shard, 0, 0));
    const claim = { id: r.id, name: r.name, gen: r.stored.gen, tick };
    return queueClaim(this.store, s, claim, () => this.storeUp());
  }

  deliver(r: LiveReminder, fire: ReminderFire): Promise<Error | undefined> {
    return this.fires.deliver(r, fire);
  }

  finish(r: LiveReminder, outcome: JobOutcome): Promise<boolean> {
    const s = this.shards.get(keyOf(r.kind, r.shard));
    if (!s) return Promise.reject(new ReminderFencedError(r.kind, r.shard, 0, 0));
    return this.store.finish(r.kind, r.shard, s.epoch, r.id, r.name, r.stored.gen, outcome);
  }

  forget(r: LiveReminder): void {
    r.stop();
    const s = this.shards.get(keyOf(r.kind, r.shard));
    const f = fieldOf(r.id, r.name);
    if (s?.live.get(f) === r) s.live.delete(f);
  }

  reread(r: LiveReminder): void {
    void this.refresh(r.kind, r.shard, r.id, r.name, undefined).catch(async (err) => {
      this.counters.storeErrors++;
      this.storeFailed(err);
      await this.sleep(STORE_RETRY_MS);
      this.reread(r);
    });
  }

  fenced(r: LiveReminder): void {
    this.deps.logger.warn(
      { kind: r.kind, shard: r.shard },
      'reminder store fenced this member out of a shard: its reminders stop here',
    );
    this.released(r.kind, r.shard);
  }

  storeFailed(err: unknown): void {
    if (this.storeDown) return;
    this.storeDown = true;
    this.deps.logger.warn({ err }, 'reminder store unavailable; fires wait and retry');
  }

  private storeUp(): void {
    if (!this.storeDown) return;
    this.storeDown = false;
    this.deps.logger.info({}, 'reminder store is back');
  }
}

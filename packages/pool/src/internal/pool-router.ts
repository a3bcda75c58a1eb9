import {
  InvalidArgumentError,
  PoisonPill,
  Terminated,
  Unwatch,
  Watch,
  type ActorSystem,
  type Context,
  type PID,
  type RootContext,
} from '@granary/core';
import {
  entryDeadline,
  entryHeader,
  entryMessage,
  entrySender,
  type Entry,
  type LocalProcess,
  type ProcessRegistry,
} from '@granary/core/internal';
import { PoolSaturatedError, PoolStateError } from '../errors';
import type { PoolBehavior, PoolContext, PoolInspection } from '../pool-behavior';
import type { PoolStrategy, WorkerLoad } from '../pool-strategy';
import { POOL_PRIORITY_HEADER } from '../urgent-requests';
import { DRAIN_POOL, PendingMessage, UrgentMessage } from './pool-messages';
import { Slot, type WorkerFactory } from './worker-factory';

/**
 * Module-level aliases of core's entry helpers for the per-message path: a CommonJS import is
 * a getter on core's exports read at every call, which kept them from being inlined (about
 * 20 ns per forwarded message here).
 */
const messageOf = entryMessage;
const headerOf = entryHeader;
const POISON_PILL_CLASS = PoisonPill;

/**
 * ```
 *  init ──start──▶ running ──drain (PoisonPill)──▶ draining ──last worker gone──┐
 *                  │ ▲   ▲                                                       ▼
 *   callback threw │ │   │ resume                                  stopping ──▶ stopped
 *                  ▼ │   │                           (Stop, from any state) ──▲
 *             suspended ─┴─Restarting──▶ restarting ──start──▶ running
 * ```
 * While `init`, `suspended` or `restarting`, user-lane messages wait in the pool actor's
 * mailbox (it is paused or about to start) and no worker is spawned from the router.
 */
export type PoolState =
  'init' | 'running' | 'suspended' | 'restarting' | 'draining' | 'stopping' | 'stopped';

/**
 * The process behind a pool's PID. Like Proto.Actor's router process, it routes user-lane
 * messages on the sender's stack, straight into a worker's mailbox (no hop through the pool
 * actor's mailbox, and no buffer of its own); urgent messages, requests marked urgent, and
 * system messages go to the pool actor, which runs the behavior's callbacks and owns the
 * workers (its children, watched).
 *
 * It is a core LocalProcess, so its PID caches it like an actor's and a send reaches `post`
 * with the lane entry (no registry lookup, no MessageEnvelope); the entry goes on unchanged
 * into the chosen worker's mailbox, so sender and headers are kept without an allocation.
 */
export class PoolRouter implements LocalProcess, PoolContext, WorkerLoad {
  state: PoolState = 'init';
  readonly self: PID;
  /** The pool actor (parent of the workers). */
  actor!: PID;
  /** Set when the pool stopped and left the registry (cached PIDs then miss). */
  dead = false;
  /** The router buffers nothing: saturation is handled in `route`, never refused to core. */
  readonly capacity = Infinity;
  readonly owner: ProcessRegistry;
  restarts = 0;
  forwarded = 0;
  unhandled = 0;
  private ctx: Context | undefined;
  private slots: Slot[] = [];
  /** Workers taken out by removeWorkers, finishing their queues. */
  private readonly retiring = new Set<string>();
  private readonly watchers = new Map<string, PID>();
  private targetSize: number;
  private readonly registry: ProcessRegistry;
  private readonly root: RootContext;

  constructor(
    readonly system: ActorSystem,
    readonly behavior: PoolBehavior<never>,
    private readonly strategy: PoolStrategy,
    private readonly factory: WorkerFactory,
    poolSize: number,
    name: string | undefined,
  ) {
    this.targetSize = poolSize;
    this.registry = this.owner = system.registry;
    this.root = system.root;
    this.self = this.registry.add(name ?? this.registry.nextId('pool$'), this);
  }

  // ── PoolContext ────────────────────────────────────────────────────────────────────────

  get core(): Context {
    if (this.ctx === undefined) throw new PoolStateError('core', this.state);
    return this.ctx;
  }

  get workers(): readonly PID[] {
    return this.slots.map((s) => s.pid);
  }

  addWorkers(n: number): number {
    this.checkResize('addWorkers', n, Infinity);
    for (let i = 0; i < n; i++) this.slots.push(this.spawn(new Slot(this.slots.length)));
    this.targetSize = this.slots.length;
    return this.targetSize;
  }

  removeWorkers(n: number): number {
    this.checkResize('removeWorkers', n, this.slots.length - 1);
    for (const slot of this.slots.splice(this.slots.length - n, n)) this.retire(slot.pid);
    this.targetSize = this.slots.length;
    return this.targetSize;
  }

  inspect(): PoolInspection {
    return {
      pool_size: this.slots.length,
      worker_behavior: this.factory.behaviorName,
      worker_mailbox_size: this.factory.mailboxSize,
      worker_restarts: this.restarts,
      messages_forwarded: this.forwarded,
      messages_unhandled: this.unhandled,
      strategy: this.strategy.name,
      state: this.state,
      ...(this.ctx ? this.behavior.handleInspect?.(this) : undefined),
    };
  }

  // ── WorkerLoad ─────────────────────────────────────────────────────────────────────────

  get count(): number {
    return this.slots.length;
  }

  load(index: number): number {
    return this.slots[index]!.load;
  }

  slotKey(index: number): number {
    return this.slots[index]!.key;
  }

  // ── Process: what reaches the pool's PID ───────────────────────────────────────────────

  /**
   * Every user message to the pool's PID: a local send (the router is cached on the PID) and
   * remote inbound delivery alike. `trySend` is then always true.
   */
  post(_pid: PID, entry: Entry, urgent: boolean): boolean {
    const message = messageOf(entry);
    // Hot path: plain user-lane work while running goes straight to a worker.
    if (
      !urgent &&
      this.state === 'running' &&
      !(message instanceof POISON_PILL_CLASS) &&
      headerOf(entry) === undefined
    ) {
      this.route(entry);
    } else this.receiveOther(message, entrySender(entry), headerOf(entry), urgent, entry);
    return true;
  }

  /** Urgent, marked urgent, PoisonPill, with headers, or not running. */
  private receiveOther(
    message: unknown,
    sender: PID | undefined,
    header: Record<string, string> | undefined,
    urgent: boolean,
    entry: Entry,
  ): void {
    if (urgent || header?.[POOL_PRIORITY_HEADER] === 'urgent') {
      this.root.send(this.actor, new UrgentMessage(message, header, entryDeadline(entry)), {
        sender,
        priority: 'urgent',
      });
    } else if (this.state === 'running') {
      // Urgent: the work sent before it is already in the workers' mailboxes, and a later
      // urgent request (inspect) then sees the pool draining.
      if (message instanceof PoisonPill) {
        this.root.send(this.actor, DRAIN_POOL, { priority: 'urgent' });
      } else this.route(entry);
    } else if (this.state === 'init' || this.state === 'suspended' || this.state === 'restarting') {
      const pending =
        message instanceof PoisonPill
          ? DRAIN_POOL
          : new PendingMessage(message, header, entryDeadline(entry));
      this.root.send(this.actor, pending, { sender });
    } else {
      this.system.deadLetters.publish(this.self, message, sender, 'stopped');
    }
  }

  sendSystemMessage(_pid: PID, message: unknown): void {
    if (message instanceof Watch) {
      if (this.state === 'stopped') this.tellTerminated(message.watcher);
      else this.watchers.set(message.watcher.toString(), message.watcher);
    } else if (message instanceof Unwatch) {
      this.watchers.delete(message.watcher.toString());
    } else if (!(message instanceof Terminated)) {
      this.registry.get(this.actor).sendSystemMessage(this.actor, message);
    }
  }

  stop(_pid: PID): void {
    this.root.stop(this.actor);
  }

  // ── Routing ────────────────────────────────────────────────────────────────────────────

  /**
   * Forwards one user-lane message to a worker, keeping its sender and headers: `entry` is a
   * core lane entry (see LocalProcess), put into the worker's mailbox as it is.
   */
  route(entry: Entry): void {
    const n = this.slots.length;
    const strategy = this.strategy;
    if (strategy.broadcast) return this.broadcast(entry);
    let i = n === 0 ? 0 : strategy.first(messageOf(entry), this);
    const tries = strategy.fallback ? n : Math.min(n, 1);
    for (let k = 0; k < tries; k++) {
      if (this.deliver(this.slots[i]!, entry)) {
        this.forwarded++;
        strategy.delivered(i);
        return;
      }
      if (++i === n) i = 0;
    }
    this.saturated(entry, tries);
  }

  private broadcast(entry: Entry): void {
    let accepted = 0;
    for (const slot of this.slots) {
      if (this.deliver(slot, entry)) accepted++;
      else {
        this.unhandled++;
        this.system.deadLetters.publish(slot.pid, entryMessage(entry), undefined, 'pool-saturated');
      }
    }
    this.forwarded += accepted;
    if (accepted === 0) this.saturated(entry, 0);
  }

  /** ergo's act.Pool forwarding, step 3: a dead worker is replaced and gets the message; false when it is full. */
  private deliver(slot: Slot, entry: Entry): boolean {
    // The worker's own process (its mailbox), as a cached send would reach it; once the
    // worker is gone (stopped and unregistered), a replacement is spawned into the slot.
    if (slot.process.dead && !this.replace(slot)) return false;
    const ok = slot.process.post(slot.pid, entry, false);
    if (ok && this.factory.tracksLoad) slot.load++;
    return ok;
  }

  /** No worker took it: a request rejects at once, a send is dead-lettered; both counted. */
  private saturated(entry: Entry, tried: number): void {
    this.unhandled++;
    const error = new PoolSaturatedError(this.self.toString(), tried, this.factory.mailboxSize);
    const { deadLetters } = this.system;
    deadLetters.publish(
      this.self,
      entryMessage(entry),
      entrySender(entry),
      'pool-saturated',
      error,
    );
  }

  // ── Lifecycle (called by the pool actor in its turns) ──────────────────────────────────

  start(ctx: Context): void {
    this.ctx = ctx;
    this.slots = [];
    for (let i = 0; i < this.targetSize; i++) this.slots.push(this.spawn(new Slot(i)));
    this.state = 'running';
  }

  /** A callback threw: the pool actor waits for its supervisor (restart, stop or resume). */
  suspend(): void {
    if (this.state === 'running') this.state = 'suspended';
  }

  /** The supervisor resumed the pool actor (it got a message that is not a lifecycle one). */
  resume(): void {
    if (this.state === 'suspended') this.state = 'running';
  }

  restarting(): void {
    // The actor's children (the workers) are being stopped by the runtime; new ones come
    // with the next Started.
    this.state = 'restarting';
    this.slots = [];
    this.retiring.clear();
  }

  drain(): void {
    if (this.state !== 'running') return;
    this.state = 'draining';
    for (const slot of this.slots.splice(0)) this.retire(slot.pid);
    this.finishDrain();
  }

  stopping(): void {
    this.state = 'stopping';
  }

  stopped(): void {
    this.state = 'stopped';
    this.slots = [];
    this.dead = true;
    this.registry.remove(this.self);
    for (const watcher of this.watchers.values()) this.tellTerminated(watcher);
    this.watchers.clear();
  }

  /** A watched worker is gone: replace it (running), or count it out (retiring). */
  onTerminated(who: PID): void {
    if (this.retiring.delete(who.toString())) {
      this.finishDrain();
      return;
    }
    const slot = this.slots.find((s) => s.pid.equals(who));
    if (slot !== undefined && this.state === 'running') this.replace(slot);
  }

  private finishDrain(): void {
    if (this.state === 'draining' && this.retiring.size === 0) this.core.stop(this.core.self);
  }

  private checkResize(operation: string, n: number, most: number): void {
    if (this.state !== 'running') throw new PoolStateError(operation, this.state);
    if (!(Number.isInteger(n) && n >= 1 && n <= most)) {
      throw new InvalidArgumentError(
        'n',
        `${operation}(n) needs an integer from 1 to ${most}, got ${n} (the pool keeps at least one worker)`,
      );
    }
  }

  private spawn(slot: Slot): Slot {
    const ctx = this.core;
    slot.load = 0;
    slot.pid = ctx.spawn(this.factory.propsFor(slot));
    slot.process = this.workerProcess(slot.pid);
    ctx.watch(slot.pid);
    return slot;
  }

  /**
   * Spawns a replacement in a dead worker's slot. A factory that throws here must not throw
   * into a sender's `send` (routing runs on the sender's stack): it is logged, and the slot
   * stays dead until the next attempt.
   */
  private replace(slot: Slot): boolean {
    try {
      this.spawn(slot);
    } catch (err) {
      this.system.logger
        .child({ component: 'pool' })
        .error(
          { pool: this.self.toString(), err },
          'could not replace a dead pool worker (workerProps threw)',
        );
      return false;
    }
    this.restarts++;
    return true;
  }

  /** A worker was just spawned here, so the registry answers with its actor (a LocalProcess). */
  private workerProcess(pid: PID): LocalProcess {
    return this.registry.get(pid) as LocalProcess;
  }

  private retire(pid: PID): void {
    this.retiring.add(pid.toString());
    this.core.poison(pid);
  }

  private tellTerminated(watcher: PID): void {
    this.system.registry
      .get(watcher)
      .sendSystemMessage(watcher, new Terminated(this.self, 'stopped'));
  }
}

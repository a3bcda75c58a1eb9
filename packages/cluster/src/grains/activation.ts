import {
  ReceiveTimeout,
  Restarting,
  Started,
  Stopped,
  Stopping,
  Terminated,
  type Actor,
  type Clock,
  type Context,
  type PID,
  type TimerWheel,
} from '@granary/core';
import { entryOf, type ActorProcess, type Entry } from '@granary/core/internal';
import { PersistentState } from '../state/persistent-state';
import { context as otelContext, type Context as TraceContext } from '@opentelemetry/api';
import {
  startActivationSpan,
  startDeactivationSpan,
  startTurnSpan,
  traceFields,
  type SpanScope,
} from '../telemetry/grain-spans';
import { endSpan, failSpan } from '../telemetry/telemetry';
import type { DeactivationReason, Grain } from './grain';
import { GrainTurnContext, grainErrorOf, type TurnHost } from './grain-context';
import {
  ActivationState,
  GRAIN_STATE,
  isRuntimeStateError,
  runtimeStateError,
  type GrainState,
} from './grain-state';
import {
  ActivationTimerSet,
  TimerTick,
  type ActivationTimer,
  type TimerOwner,
} from './grain-timers';
import { errorNameOf, type KindStats } from './grain-stats';
import { H_ACK } from './internal/call-headers';
import type { TurnWatch, WatchedTurn } from './turn-watch';

/** A message held for an activation that is deactivating (delivered to the next one). */
export interface HeldMessage {
  /** The call's core entry (message, sender, headers). */
  entry: Entry;
  /** A send: acknowledged once accepted; the grain sees its `sender` option as the sender. */
  ack: boolean;
}

/** Ends an activation: posted by the activator behind every message already routed to it. */
export class Deactivate {
  constructor(readonly reason: DeactivationReason) {}
}

/** Activation ids: the member's random prefix and a counter, so they never repeat. */
let idSeq = 0;

/**
 * The per-kind host an activation talks to: the kind's Activator (its definition, its shard
 * gate, the member's services, and the activation lifecycle).
 */
export interface ActivationHost extends TurnHost {
  /** onActivate is about to run (the activation log). */
  activated(a: Activation): void;
  /** onActivate finished (`error`: it failed) after `ms` (metrics; undefined when not timed). */
  activationDone(a: Activation, ms: number | undefined, error: unknown): void;
  /** A turn finished; `influencing`: it counts as activity for passivation. */
  turnEnded(a: Activation, influencing: boolean): void;
  /** A call expired in the mailbox and was dropped without a turn. */
  dropped(a: Activation): void;
  /** Asks `a` to end after the messages already routed to it. */
  requestDeactivate(a: Activation, reason: DeactivationReason): void;
  /** onDeactivate ran: the activation is over. */
  ended(a: Activation, reason: DeactivationReason): void;
  /** Answers `to` with NotOwnerError for `identity` (this member no longer serves the shard). */
  notOwner(to: PID | undefined, identity: string, shard: number): void;
  /** Watches awaiting turns (undefined when the kind has neither longTurnMs nor turnTimeoutMs). */
  readonly watch: TurnWatch<ActivationTurn> | undefined;
  /** A synchronous turn took `ms`, past the kind's longTurnMs. */
  longTurn(a: Activation, ms: number, running: boolean): void;
  /** Answers `to` with TurnTimeoutError: the activation's stuck turn still runs. */
  stuckReply(a: Activation, to: PID | undefined): void;
  /** Served-turn statistics (undefined unless enabled: the admin API turns them on). */
  readonly stats: KindStats | undefined;
}

/** An awaiting turn of an activation, as the kind's TurnWatch follows it. */
export interface ActivationTurn extends WatchedTurn {
  readonly activation: Activation;
}

/** What few activations need: allocated on first use, so an idle grain does not carry it. */
class Rare {
  /** Held while deactivating (bounded by the kind's mailbox capacity). */
  held: HeldMessage[] | undefined = undefined;
  /** Resolved when the activation has ended (drain waits on it). */
  endWaiters: Array<() => void> | undefined = undefined;
  /**
   * onActivate (or the state load) failed: every message gets this error until the activation
   * ends (a GrainError, or the runtime's state error as it is).
   */
  failure: Error | undefined = undefined;
  /** The state the kind declares, once loaded (the grain's GRAIN_STATE). */
  state: ActivationState<unknown> | undefined = undefined;
  /** Reentrant turns still awaiting. */
  running = 0;
  /** The activation id, once read. */
  id: string | undefined = undefined;
  /** Deactivate was refused by a full mailbox: posted again after the next turn. */
  deferred: DeactivationReason | undefined = undefined;
  quiet: (() => void) | undefined = undefined;
  /** A long turn of this activation was logged (once per activation). */
  longLogged = false;
  /** How long a turn found stuck (past turnTimeoutMs) had run then, while it still runs. */
  stuckRunningMs: number | undefined = undefined;
  /** ctx.timers, once used. */
  timers: ActivationTimerSet | undefined = undefined;
  /** The trace context of the call that started the activation (its span's parent). */
  traceParent: TraceContext | undefined = undefined;
}

function isLifecycle(m: unknown): boolean {
  return (
    m instanceof Stopping ||
    m instanceof Stopped ||
    m instanceof Restarting ||
    m instanceof Terminated ||
    m instanceof ReceiveTimeout
  );
}

/**
 * Left of a first call's time for its answer to travel back: what onActivate (and a state load)
 * gives up early so that its failure reaches the caller as itself (StateUnavailableError)
 * within the caller's deadline, not as the caller's own timeout. A tenth of the time left, at
 * most this.
 */
const ACTIVATION_REPLY_MARGIN_MS = 250;

/**
 * The deadline of an activation's onActivate and state load: the cluster's requestTimeoutMs
 * from now, and never past the first caller's deadline less a margin for the reply.
 */
export function activationDeadline(
  services: { system: { clock: { now(): number } }; activationTimeoutMs: number },
  firstDeadline: number,
): number {
  const now = services.system.clock.now();
  const own = now + services.activationTimeoutMs;
  if (!Number.isFinite(firstDeadline)) return own;
  const margin = Math.min(ACTIVATION_REPLY_MARGIN_MS, Math.max(0, firstDeadline - now) / 10);
  return Math.min(own, firstDeadline - margin);
}

function isPromise(v: unknown): v is Promise<unknown> {
  return (
    v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function'
  );
}

/**
 * One activation of one grain on this member, and the core actor that runs it (one object per
 * idle grain besides the core actor and the grain itself). Its state machine:
 *
 * ```
 *   (none) ──first message──▶ active ──idle / drain / not owner──▶ deactivating ──onDeactivate done──▶ (none)
 *                              ▲                                        │ messages arriving here are held
 *                              └───── held messages start a new one ◀───┘ (after the old one ended)
 * ```
 *
 * The mailbox gives the ordering: `Started` runs onActivate (messages wait behind it), user
 * messages are turns, `Deactivate` runs onDeactivate. Every turn first checks that this member
 * still serves the shard (`canServe`), so a fenced member stops at once. Grain errors never
 * reach core supervision: they are replies.
 */
export class Activation implements Actor, TimerOwner {
  state: 'active' | 'deactivating' = 'active';
  /** The core actor running the grain: calls are posted into its mailbox without a lookup. */
  proc!: ActorProcess;
  /** The grain instance (made when Started runs). */
  private grain: Grain | undefined = undefined;
  /** Messages posted to the actor and not yet finished. */
  inflight = 0;
  /** idleStamp() of the last message that influences idle time. */
  lastActivity: number;
  /** Neighbours in the kind's idle list (ordered by lastActivity). */
  prevIdle: Activation | undefined = undefined;
  nextIdle: Activation | undefined = undefined;
  private rare: Rare | undefined = undefined;
  /**
   * The deadline of the call that started it (epoch ms, undefined: none); onActivate answers
   * before it. Cleared when activation starts.
   */
  private firstDeadline: number | undefined;
  /** Number part of the activation id (the string is built on first read: one less per grain). */
  private readonly seq: number;

  constructor(
    /** The kind's host (its Activator). */
    readonly host: ActivationHost,
    readonly identity: string,
    readonly shard: number,
    now: number,
    /** The deadline of the call that started it (epoch ms), if it had one. */
    firstDeadline: number | undefined,
  ) {
    this.lastActivity = now;
    this.firstDeadline = firstDeadline;
    this.seq = ++idSeq;
  }

  /** The grain kind (spans). */
  get kind(): string {
    return this.host.def.name;
  }

  /** The epoch of the shard claim it runs under, 0 when not held (spans). */
  get epoch(): number {
    return this.host.gate.epochOf(this.shard);
  }

  /** Sets the trace context of the call that started it (before Started runs). */
  set traceParent(ctx: TraceContext | undefined) {
    if (ctx !== undefined || this.rare !== undefined) (this.rare ??= new Rare()).traceParent = ctx;
  }

  /** Unique per activation, across members and restarts. */
  get id(): string {
    // Kept once read (grains that show it read it per call); idle grains never build it.
    const r = (this.rare ??= new Rare());
    return (r.id ??= `${this.host.services.idPrefix}-${this.seq}`);
  }

  /** The grain's timers (`ctx.timers`), made on first use. */
  get timers(): ActivationTimerSet {
    const r = (this.rare ??= new Rare());
    return (r.timers ??= new ActivationTimerSet(this));
  }

  get wheel(): TimerWheel {
    return this.host.services.system.timers;
  }

  get clock(): Clock {
    return this.host.services.system.clock;
  }

  /** A timer fired: its turn is queued like a message (none once deactivating). */
  postTick(tick: TimerTick): boolean {
    const proc = this.proc;
    if (this.state !== 'active' || proc.dead) return false;
    // Counted like a call (the member's pending calls): its turn ends like one.
    const load = this.host.services.load;
    this.inflight++;
    load.pending++;
    if (proc.post(proc.self, entryOf(tick), false)) return true;
    this.inflight--; // full mailbox: this fire is dropped, the next one tries again
    load.pending--;
    return false;
  }

  /** The state handle, when the kind declares state and it was loaded. */
  get grainState(): GrainState<unknown> | undefined {
    return this.rare?.state;
  }

  /** Messages held while deactivating, if any. */
  get held(): HeldMessage[] | undefined {
    return this.rare?.held;
  }

  /** Holds a message for the next activation; false when `capacity` are held already. */
  hold(m: HeldMessage, capacity: number): boolean {
    const held = ((this.rare ??= new Rare()).held ??= []);
    if (held.length >= capacity) return false;
    held.push(m);
    return true;
  }

  /** Takes the held messages (the activation has ended). */
  takeHeld(): HeldMessage[] | undefined {
    const r = this.rare;
    if (r === undefined) return undefined;
    const held = r.held;
    r.held = undefined;
    return held;
  }

  /** Why it deactivates, while a full mailbox keeps Deactivate out. */
  get deferredDeactivate(): DeactivationReason | undefined {
    return this.rare?.deferred;
  }

  deferDeactivate(reason: DeactivationReason | undefined): void {
    if (reason !== undefined || this.rare !== undefined)
      (this.rare ??= new Rare()).deferred = reason;
  }

  /** True the first time (a long turn of this activation is logged once). */
  firstLongTurn(): boolean {
    const r = (this.rare ??= new Rare());
    if (r.longLogged) return false;
    return (r.longLogged = true);
  }

  /** How long its stuck turn had run when found stuck, while that turn still runs. */
  get stuckMs(): number | undefined {
    return this.rare?.stuckRunningMs;
  }

  set stuckMs(ms: number | undefined) {
    if (ms !== undefined || this.rare !== undefined) (this.rare ??= new Rare()).stuckRunningMs = ms;
  }

  /** Resolves once the activation has ended. */
  ended(): Promise<void> {
    const r = (this.rare ??= new Rare());
    return new Promise((resolve) => (r.endWaiters ??= []).push(resolve));
  }

  /** @internal called by the activator when onDeactivate has run. */
  finish(): void {
    const r = this.rare;
    const waiters = r?.endWaiters;
    if (waiters === undefined) return;
    r!.endWaiters = undefined;
    for (const w of waiters) w();
  }

  // ── the actor ─────────────────────────────────────────────────────────────────────────

  receive(ctx: Context): void | Promise<void> {
    const message = ctx.message;
    if (message !== null && typeof message === 'object') {
      if (message instanceof Deactivate) return this.deactivate(ctx, message.reason);
      if (message instanceof Started) return this.activate(ctx);
      if (message instanceof TimerTick) return this.turn(ctx, message, message.timer);
      if (isLifecycle(message)) return;
    }
    return this.turn(ctx, message);
  }

  /**
   * Loads the kind's state if it declares one, then runs onActivate; synchronous (no awaited
   * turn) unless either is asynchronous.
   */
  private activate(ctx: Context): void | Promise<void> {
    const host = this.host;
    host.activated(this);
    const services = host.services;
    const telemetry = services.telemetry;
    const scope = telemetry.tracing
      ? startActivationSpan(telemetry, this, this.rare?.traceParent)
      : undefined;
    const clock = services.system.clock;
    const t0 = services.timed ? clock.monotonic() : undefined;
    const firstDeadline = this.firstDeadline;
    // Only the first turn needs it: an idle grain keeps no boxed number.
    this.firstDeadline = undefined;
    let grain: Grain;
    try {
      grain = this.grain = host.def.factory();
    } catch (err) {
      return this.activationEnded(t0, scope, err, true);
    }
    // Most grains declare neither state nor onActivate: no closure, no deadline per activation.
    if (host.def.state === undefined && grain.onActivate === undefined) {
      return this.activationEnded(t0, scope, undefined, false);
    }
    const deadline = activationDeadline(services, firstDeadline ?? Infinity);
    const done = (err: unknown): void => this.activationEnded(t0, scope, err, false);
    const failed = (err: unknown): void => this.activationEnded(t0, scope, err, true);
    if (host.def.state !== undefined) {
      // The state read is a child of the activation's span.
      const load =
        scope === undefined
          ? this.loadState(grain, deadline)
          : otelContext.with(scope.context, () => this.loadState(grain, deadline));
      return load.then(
        () => this.runOnActivate(ctx, grain, deadline, scope, done, failed),
        (err: unknown) => failed(runtimeStateError(err)),
      );
    }
    return this.runOnActivate(ctx, grain, deadline, scope, done, failed);
  }

  /** Activation over: `failed` when the factory, the state load or onActivate threw. */
  private activationEnded(
    t0: number | undefined,
    scope: SpanScope | undefined,
    err: unknown,
    failed: boolean,
  ): void {
    if (failed) this.activationFailed(err, scope);
    const clock = this.host.services.system.clock;
    this.host.activationDone(this, t0 === undefined ? undefined : clock.monotonic() - t0, err);
    if (scope !== undefined) endSpan(scope.span, err);
  }

  private runOnActivate(
    ctx: Context,
    grain: Grain,
    deadline: number,
    scope: SpanScope | undefined,
    done: (err: unknown) => void,
    failed: (err: unknown) => void,
  ): void | Promise<void> {
    if (grain.onActivate === undefined) return done(undefined);
    let pending: unknown;
    try {
      const gctx = new GrainTurnContext(this, ctx, undefined, undefined, true, deadline);
      if (scope === undefined) pending = grain.onActivate(gctx);
      else {
        gctx.traced(scope.context, undefined);
        pending = otelContext.with(scope.context, grain.onActivate, grain, gctx);
      }
    } catch (err) {
      return failed(err);
    }
    if (!isPromise(pending)) return done(undefined);
    return pending.then(() => done(undefined), failed);
  }

  /**
   * Loads the state the kind declares, under the shard epoch of this activation (captured now:
   * a drain must still be able to save under it), and hands the grain its handle.
   */
  private async loadState(grain: Grain, deadline: number): Promise<void> {
    const host = this.host;
    const def = host.def;
    const declared = def.state!;
    const epoch = host.gate.epochOf(this.shard);
    const ps = new PersistentState<unknown>({
      store: declared.store,
      kind: def.name,
      id: this.identity,
      codec: declared.codec,
      epoch: () => epoch,
      initial: declared.initial,
      telemetry: host.services.state,
    });
    await ps.load(deadline);
    const handle = new ActivationState(ps, () => host.requestDeactivate(this, 'state-conflict'));
    (this.rare ??= new Rare()).state = handle;
    Object.defineProperty(grain, GRAIN_STATE, { value: handle, configurable: true });
  }

  private activationFailed(err: unknown, scope: SpanScope | undefined): void {
    const host = this.host;
    const kind = host.def.name;
    (this.rare ??= new Rare()).failure = isRuntimeStateError(err)
      ? (err as Error)
      : grainErrorOf(kind, this.identity, err);
    host.services.logger.warn(
      {
        err,
        grain: `${kind}/${this.identity}`,
        activationId: this.id,
        ...traceFields(scope?.span),
      },
      'grain activation failed',
    );
    host.requestDeactivate(this, 'activation-failed');
  }

  /**
   * One message. The shard gate is checked here, once per delivery: a message waits in the
   * mailbox behind other turns, and a member fenced meanwhile must not run it. A call whose
   * deadline passed while it waited is dropped: its caller has given up (its own timer failed
   * it), so the turn and the reply would be spent for nobody. A send is not dropped: it was
   * acknowledged when it was accepted.
   */
  private turn(ctx: Context, message: unknown, timer?: ActivationTimer): void | Promise<void> {
    const host = this.host;
    const deadline = ctx.deadline;
    // Read once: it also tells whether a reply made before the turn returns is still wanted.
    let now = 0;
    if (deadline !== undefined && deadline <= (now = host.services.system.clock.now())) {
      if (ctx.headers[H_ACK] !== '1') return host.dropped(this);
    }
    const def = host.def;
    const influencing = timer === undefined ? !def.idleNeutral(message) : timer.keepAlive;
    if (timer !== undefined && (!timer.starting() || this.state !== 'active')) {
      return host.turnEnded(this, influencing); // cancelled, or the activation is ending
    }
    const failure = this.rare?.failure;
    if (failure !== undefined) {
      host.services.reply(ctx.sender, failure);
      return host.turnEnded(this, influencing);
    }
    if (!host.gate.canServe(this.shard)) {
      host.notOwner(ctx.sender, this.identity, this.shard);
      host.requestDeactivate(this, 'not-owner');
      return host.turnEnded(this, influencing);
    }
    if (this.rare?.stuckRunningMs !== undefined) {
      host.stuckReply(this, ctx.sender); // a reentrant message let in beside the stuck turn
      return host.turnEnded(this, influencing);
    }
    const watch = host.watch;
    const stats = host.stats;
    const services = host.services;
    const clock = services.system.clock;
    const timed = watch !== undefined || stats !== undefined;
    const t0 = timed ? clock.monotonic() : 0;
    const headers = ctx.headers;
    const gctx = new GrainTurnContext(this, ctx, message, headers, false, deadline, now);
    let result: unknown;
    try {
      const telemetry = services.telemetry;
      if (!telemetry.tracing) {
        result = timer === undefined ? this.grain!.receive(gctx) : timer.handler(gctx);
      } else {
        const scope = startTurnSpan(telemetry, this, message, headers, ctx.deadline, clock.now());
        gctx.traced(scope.context, scope.span);
        result =
          timer === undefined
            ? otelContext.with(scope.context, this.grain!.receive, this.grain, gctx)
            : otelContext.with(scope.context, timer.handler, undefined, gctx);
      }
    } catch (err) {
      gctx.fail(err);
      if (timed) this.measured(t0, clock.monotonic(), err, true);
      return host.turnEnded(this, influencing);
    }
    if (!isPromise(result)) {
      gctx.finish(result);
      if (timed) this.measured(t0, clock.monotonic(), undefined, false);
      return host.turnEnded(this, influencing);
    }
    gctx.pin();
    const blocking = timer !== undefined || !def.reentrant(message);
    let turn: ActivationTurn | undefined;
    if (watch !== undefined) {
      turn = { since: t0, blocking, long: false, stuck: false, activation: this };
      watch.add(turn);
    }
    let thrown: unknown;
    let failed = false;
    const settled = result.then(
      (v) => gctx.finish(v),
      (e: unknown) => {
        failed = stats !== undefined;
        thrown = e;
        gctx.fail(e);
      },
    );
    const done = (): void => {
      if (turn !== undefined) watch!.remove(turn, clock.monotonic());
      if (stats !== undefined) this.counted(stats, clock.monotonic() - t0, thrown, failed);
      host.turnEnded(this, influencing);
    };
    if (blocking) return settled.then(done);
    // Reentrant: the mailbox moves on; the turn finishes whenever its promise settles.
    const r = (this.rare ??= new Rare());
    r.running++;
    void settled.then(() => {
      done();
      if (--r.running === 0 && r.quiet) r.quiet();
    });
  }

  /** A synchronous turn ended: one clock read, a report if it was long, its statistics. */
  private measured(t0: number, now: number, error: unknown, failed: boolean): void {
    const ms = now - t0;
    const host = this.host;
    if (host.watch !== undefined && ms > host.def.longTurnMs) host.longTurn(this, ms, false);
    const stats = host.stats;
    if (stats !== undefined) this.counted(stats, ms, error, failed);
  }

  private counted(stats: KindStats, ms: number, error: unknown, failed: boolean): void {
    stats.turn(this.identity, ms, failed ? errorNameOf(error) : undefined);
  }

  /**
   * Runs onDeactivate (after reentrant turns still awaiting), then saves the kind's state if it
   * persists on deactivation; synchronous when there is nothing to wait for.
   */
  private deactivate(ctx: Context, reason: DeactivationReason): void | Promise<void> {
    const r = this.rare;
    if (r !== undefined && r.running > 0) {
      return new Promise<void>((resolve) => (r.quiet = resolve)).then(() =>
        this.deactivate(ctx, reason),
      );
    }
    const state = r?.failure === undefined ? r?.state : undefined;
    const save = state !== undefined && this.host.def.state?.persistOnDeactivate === true;
    const telemetry = this.host.services.telemetry;
    const scope = telemetry.tracing ? startDeactivationSpan(telemetry, this, reason) : undefined;
    const pending = this.runOnDeactivate(reason, scope);
    if (!save && pending === undefined) return this.end(ctx, reason, scope);
    return (async () => {
      await pending;
      if (save) {
        await state.saveIfChanged().catch((err) => this.deactivateFailed(err, reason, scope));
      }
      this.end(ctx, reason, scope);
    })();
  }

  /** The grain's onDeactivate (failures logged): a promise only when it is asynchronous. */
  private runOnDeactivate(
    reason: DeactivationReason,
    scope: SpanScope | undefined,
  ): Promise<void> | undefined {
    const grain = this.grain;
    if (this.rare?.failure !== undefined || grain?.onDeactivate === undefined) return undefined;
    let pending: unknown;
    try {
      pending =
        scope === undefined
          ? grain.onDeactivate(reason)
          : otelContext.with(scope.context, grain.onDeactivate, grain, reason);
    } catch (err) {
      this.deactivateFailed(err, reason, scope);
    }
    if (!isPromise(pending)) return undefined;
    return pending.then(
      () => undefined,
      (err: unknown) => this.deactivateFailed(err, reason, scope),
    );
  }

  private deactivateFailed(
    err: unknown,
    reason: DeactivationReason,
    scope: SpanScope | undefined,
  ): void {
    if (scope !== undefined) failSpan(scope.span, err);
    this.host.services.logger.error(
      { err, grain: `${this.host.def.name}/${this.identity}`, reason, ...traceFields(scope?.span) },
      'onDeactivate failed',
    );
  }

  private end(ctx: Context, reason: DeactivationReason, scope: SpanScope | undefined): void {
    this.rare?.timers?.cancelAll();
    scope?.span.end();
    this.host.ended(this, reason);
    ctx.stop(ctx.self);
  }
}

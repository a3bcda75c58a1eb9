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
  type TimerWheel,
} from '@granary/core';
import { entryOf, type ActorProcess } from '@granary/core/internal';
import { context as otelContext, type Context as TraceContext } from '@opentelemetry/api';
import { startTurnSpan } from '../telemetry/grain-spans';
import {
  Deactivate,
  Rare,
  type ActivationHost,
  type ActivationTurn,
  type HeldMessage,
  type HostedActivation,
} from './activation-host';
import type { DeactivationReason, Grain } from './grain';
import { GrainTurnContext } from './grain-context';
import type { GrainState } from './grain-state';
import {
  ActivationTimerSet,
  TimerTick,
  type ActivationTimer,
  type TimerOwner,
} from './grain-timers';
import { errorNameOf, type KindStats } from './grain-stats';
import { H_ACK } from './internal/call-headers';
import { deactivate } from './internal/activation-end';
import { isPromise } from './internal/thenable';
import { activate } from './internal/activation-start';

// Core's message classes as module-level aliases: a CommonJS re-export is a getter per read,
// and every message an activation receives is tested against them.
const StartedMessage = Started;
const StoppingMessage = Stopping;
const StoppedMessage = Stopped;
const RestartingMessage = Restarting;
const TerminatedMessage = Terminated;
const ReceiveTimeoutMessage = ReceiveTimeout;

/** Core lifecycle messages an activation ignores (its own lifecycle is Started and Deactivate). */
function isLifecycle(m: unknown): boolean {
  return (
    m instanceof StoppingMessage ||
    m instanceof StoppedMessage ||
    m instanceof RestartingMessage ||
    m instanceof TerminatedMessage ||
    m instanceof ReceiveTimeoutMessage
  );
}

/** Activation ids: the member's random prefix and a counter, so they never repeat. */
let idSeq = 0;

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
export class Activation implements Actor, TimerOwner, HostedActivation {
  state: 'active' | 'deactivating' = 'active';
  /** The core actor running the grain: calls are posted into its mailbox without a lookup. */
  proc!: ActorProcess;
  /** @internal the grain instance (made when Started runs). */
  grain: Grain | undefined = undefined;
  /** Messages posted to the actor and not yet finished. */
  inflight = 0;
  /** idleStamp() of the last message that influences idle time. */
  lastActivity: number;
  /** Neighbours in the kind's idle list (ordered by lastActivity). */
  prevIdle: Activation | undefined = undefined;
  nextIdle: Activation | undefined = undefined;
  /** @internal its key in the kind's activation table (set when added). */
  tableKey = 0;
  /** @internal what few activations need (see Rare). */
  rare: Rare | undefined = undefined;
  /**
   * @internal the deadline of the call that started it (epoch ms, undefined: none); onActivate
   * answers before it. Cleared when activation starts.
   */
  firstDeadline: number | undefined;
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
      if (message instanceof Deactivate) return deactivate(this, ctx, message.reason);
      if (message instanceof StartedMessage) return activate(this, ctx);
      if (message instanceof TimerTick) return this.turn(ctx, message, message.timer);
      if (isLifecycle(message)) return;
    }
    return this.turn(ctx, message);
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
    // In time: the deadline was read above and had not passed (a late send runs anyway).
    const inTime = deadline !== undefined && deadline > now;
    const gctx = new GrainTurnContext(this, ctx, message, headers, false, deadline, inTime);
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
      if (!timed) return host.turnEnded(this, influencing);
      const end = clock.monotonic();
      this.measured(t0, end, err, true);
      return host.turnEnded(this, influencing, Math.ceil(end));
    }
    if (!isPromise(result)) {
      gctx.finish(result);
      if (!timed) return host.turnEnded(this, influencing);
      // One clock read for the turn's end: its duration and the activation's idle stamp (rounded
      // up, as passivation's idleStamp). Only a long turn or kept statistics go on to `measured`
      // (no boxed numbers passed otherwise).
      const end = clock.monotonic();
      if (stats !== undefined || end - t0 > def.longTurnMs) {
        this.measured(t0, end, undefined, false);
      }
      return host.turnEnded(this, influencing, Math.ceil(end));
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
      if (!timed) return host.turnEnded(this, influencing);
      const end = clock.monotonic();
      if (turn !== undefined) watch!.remove(turn, end);
      if (stats !== undefined) this.counted(stats, end - t0, thrown, failed);
      host.turnEnded(this, influencing, Math.ceil(end));
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
}

import type { Context, PID, TimerHandle } from '@granary/core';
import type { Context as TraceContext, Span } from '@opentelemetry/api';
import type { ShardGate } from '../membership/fencing';
import { checkChainPath, outgoingPath, type ParentCall } from './deadlock-detection';
import { checkIdentity } from './grain-identity';
import type {
  DeactivationReason,
  GrainCallOptions,
  GrainClusterHandle,
  GrainContext,
  GrainSendOptions,
  GrainTimers,
} from './grain';
import { H_ACK, H_CHAIN, H_REPLY_TO } from './internal/call-headers';
import type { GrainServices } from './internal/grain-services';
import type { KindDefinition } from './kind';
import { RemindersNotConfiguredError } from '../reminders/errors';
import { isReminderFire, type GrainReminders } from '../reminders/reminder';
import { stateOf, type GrainState } from './grain-state';
import { callerErrorOf } from './internal/caller-error';
import { endSpan } from '../telemetry/telemetry';
import { fencedEpoch } from './internal/write-fence';

/** Chain ids: the member's random prefix and a counter (randomBytes per call costs ~5 µs). */
let chainSeq = 0;

/** What a turn's context needs of the kind's host (the kind's Activator). */
export interface TurnHost {
  readonly def: KindDefinition;
  readonly gate: ShardGate;
  readonly services: GrainServices;
  requestDeactivate(grain: TurnGrain, reason: DeactivationReason): void;
  /** A request's turn returned undefined without respond(): its caller gets no reply. */
  noReply(grain: TurnGrain, message: unknown): void;
}

/** What a turn's context needs of its activation. */
export interface TurnGrain {
  readonly identity: string;
  /** The state handle when the kind declares state (on the grain as GRAIN_STATE). */
  readonly grainState: GrainState<unknown> | undefined;
  /** The activation id. */
  readonly id: string;
  readonly shard: number;
  readonly host: TurnHost;
  /** The activation's timers (made on first use). */
  readonly timers: GrainTimers;
}

/** `from` of a context whose sender has not been read from the core context yet. */
const UNREAD = Symbol('unread');

/**
 * The context of one grain turn (or of onActivate). One small object per turn, so reentrant
 * turns that interleave each keep their own message, sender and deadline.
 *
 * The sender is read from the core context only when needed: a turn that answers before it
 * returns replies through the core context, which completes a local caller's future directly
 * (no PID made for it). A turn that returns a promise pins its sender first (`pin`), since the
 * core context moves on to other messages while a reentrant turn awaits.
 */
export class GrainTurnContext implements GrainContext {
  private responded = false;
  private abort: AbortController | undefined = undefined;
  private abortTimer: TimerHandle | undefined = undefined;
  /** Epoch ms; Infinity when the caller gave no deadline. */
  private readonly due: number;
  private cachedChain: string | undefined = undefined;
  private from: PID | undefined | typeof UNREAD;
  /**
   * True while the turn runs synchronously and its start found the deadline not passed; false
   * once it awaits (see `expired`). A flag, not the start time: a boxed number less per turn.
   */
  private inTime: boolean;
  /** The turn's trace context (its server span; the activation's span in onActivate). */
  private trace: TraceContext | undefined = undefined;
  /** The turn's server span, ended with the turn. */
  private span: Span | undefined = undefined;

  constructor(
    private readonly activation: TurnGrain,
    readonly core: Context,
    readonly message: unknown,
    private readonly header: Readonly<Record<string, string>> | undefined,
    /** onActivate: no message, no sender. */
    lifecycle: boolean,
    /** The call's deadline as it travelled with the request (core's `ctx.deadline`). */
    deadline: number | undefined,
    /**
     * The turn's start read the clock and found `deadline` not passed: a reply made before the
     * turn returns is in time without a new clock read (see `expired`).
     */
    inTime = false,
  ) {
    this.due = deadline ?? Infinity;
    this.from = lifecycle ? undefined : UNREAD;
    this.inTime = inTime;
  }

  get sender(): PID | undefined {
    const from = this.from;
    return from === UNREAD ? (this.from = this.core.sender) : from;
  }

  /**
   * @internal the turn is traced: the calls it makes are children of `trace`, and `span` (the
   * turn's server span, if any) ends with the turn.
   */
  traced(trace: TraceContext, span: Span | undefined): void {
    this.trace = trace;
    this.span = span;
  }

  /** @internal the trace context of the turn, undefined when it is not traced. */
  get traceContext(): TraceContext | undefined {
    return this.trace;
  }

  /** @internal the member's grain services (persistent state takes its telemetry and logger). */
  get services(): GrainServices {
    return this.activation.host.services;
  }

  /** @internal the turn returned a promise: fix the sender before the core context moves on. */
  pin(): void {
    if (this.from === UNREAD) this.from = this.core.sender;
    this.inTime = false; // a reply after an await reads the clock
  }

  /**
   * False when nobody awaits an answer: a send without a `sender` option (read from the header,
   * so the core context's sender is not made for it).
   */
  private get answerable(): boolean {
    if (this.from !== UNREAD) return this.from !== undefined;
    const h = this.header;
    return h === undefined || h[H_ACK] !== '1' || h[H_REPLY_TO] !== undefined;
  }

  get identity(): string {
    return this.activation.identity;
  }

  get kind(): string {
    return this.activation.host.def.name;
  }

  get activationId(): string {
    return this.activation.id;
  }

  get cluster(): GrainClusterHandle {
    return this.activation.host.services.cluster;
  }

  get deadline(): number {
    return this.due;
  }

  get remainingMs(): number {
    return Math.max(0, this.deadline - this.core.system.clock.now());
  }

  /** The incoming call's chain id; a call from outside any grain starts a chain here. */
  get chainId(): string {
    return (this.cachedChain ??=
      this.header?.[H_CHAIN] ?? `${this.activation.host.services.idPrefix}.${++chainSeq}`);
  }

  get timers(): GrainTimers {
    return this.activation.timers;
  }

  get reminders(): GrainReminders {
    const of = this.activation.host.services.reminders;
    if (of === undefined) throw new RemindersNotConfiguredError();
    return of(this.kind, this.identity);
  }

  get epoch(): number {
    const a = this.activation;
    return a.host.gate.epochOf(a.shard);
  }

  /** See stateEpochOf. */
  stateEpoch(): () => number {
    const a = this.activation;
    return fencedEpoch(a.host.gate, a.shard, this.kind, a.identity, a.host.services.cluster.id);
  }

  get signal(): AbortSignal {
    if (this.abort === undefined) {
      this.abort = new AbortController();
      const remaining = this.deadline - this.core.system.clock.now();
      if (remaining <= 0) this.abort.abort(new Error('deadline passed'));
      else if (Number.isFinite(remaining)) {
        const ac = this.abort;
        this.abortTimer = this.core.system.timers.schedule(remaining, () =>
          ac.abort(new Error('deadline passed')),
        );
      }
    }
    return this.abort.signal;
  }

  respond(message: unknown): void {
    if (this.responded) return;
    this.responded = true;
    if (this.expired()) return;
    this.reply(message instanceof Error ? this.grainError(message) : message);
  }

  request<T = unknown>(
    kind: string,
    identity: string,
    message: unknown,
    options?: GrainCallOptions,
  ): Promise<T> {
    let parent: ParentCall;
    try {
      checkIdentity(identity);
      parent = this.parent();
    } catch (err) {
      return Promise.reject(err as Error);
    }
    const caller = this.activation.host.services.caller;
    return caller.request<T>(kind, identity, message, options, parent);
  }

  send(kind: string, identity: string, message: unknown, options?: GrainSendOptions): void {
    checkIdentity(identity);
    const caller = this.activation.host.services.caller;
    caller.send(kind, identity, message, this.parent(), options?.sender);
  }

  deactivate(): void {
    this.activation.host.requestDeactivate(this.activation, 'requested');
  }

  get state(): unknown {
    return this.stateHandle('ctx.state').state;
  }

  set state(value: unknown) {
    this.stateHandle('ctx.state').state = value;
  }

  writeState(): Promise<number> {
    try {
      return this.stateHandle('ctx.writeState()').write();
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  clearState(): Promise<void> {
    try {
      return this.stateHandle('ctx.clearState()').clear();
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  private stateHandle(what: string): GrainState<unknown> {
    return this.activation.grainState ?? stateOf<unknown>({}, what);
  }

  /** @internal the turn ended with `value`: it is the reply unless respond() was called. */
  finish(value: unknown): void {
    this.abortTimer?.cancel();
    if (this.span !== undefined) endSpan(this.span);
    // A reminder fire is answered when its turn ends, whatever the grain returned: its owner
    // learns that the turn ended without throwing (a job is done then).
    if (value === undefined && isReminderFire(this.message)) value = true;
    if (value !== undefined) {
      if (!this.responded && this.answerable) this.respond(value);
    } else if (!this.responded && this.header?.[H_ACK] !== '1' && this.sender !== undefined) {
      // A requester (not a send's) waits for an answer that will not come: say so.
      this.activation.host.noReply(this.activation, this.message);
    }
  }

  /** @internal the turn threw: a requester gets GrainError, a send is logged. */
  fail(error: unknown): void {
    this.abortTimer?.cancel();
    if (this.span !== undefined) endSpan(this.span, error);
    if (!this.responded && this.answerable) {
      this.responded = true;
      if (!this.expired()) this.reply(this.grainError(error));
    } else {
      this.activation.host.services.logger.error(
        { err: error, grain: `${this.kind}/${this.identity}` },
        'grain turn failed with no caller to tell',
      );
    }
  }

  /**
   * True (and counted) when the call's deadline has passed: its caller has given up, so the reply
   * is not encoded nor sent. A reply made before the turn returns is checked against the time
   * the turn started (its deadline had not passed then): the call expired in the mailbox, if at
   * all, where the turn's start dropped it; one that runs out during a synchronous turn is
   * answered anyway, and its caller ignores the late reply. A reply after an await reads the
   * clock, since an await can take any time.
   */
  private expired(): boolean {
    const due = this.due;
    if (due === Infinity || this.inTime) return false;
    if (due > this.core.system.clock.now()) return false;
    this.activation.host.services.counters.droppedReplies++;
    return true;
  }

  /** Unpinned (still inside the turn): through the core context, which may skip the PID. */
  private reply(message: unknown): void {
    const from = this.from;
    if (from === UNREAD) this.core.respond(message);
    else this.activation.host.services.reply(from, message);
  }

  /** What the caller gets for an error of grain code (callerErrorOf). */
  private grainError(error: unknown): Error {
    return callerErrorOf(this.kind, this.identity, error);
  }

  /** The chain this turn's outgoing calls carry: this grain joins it unless it is reentrant. */
  private parent(): ParentCall {
    const a = this.activation;
    const path = outgoingPath(a.host.def, a.identity, this.message, this.header);
    checkChainPath(path);
    return { deadline: this.deadline, chainId: this.chainId, path, trace: this.trace };
  }
}

/** The member's grain services behind a grain context (undefined for a context made elsewhere). */
export function servicesOf(ctx: GrainContext): GrainServices | undefined {
  return ctx instanceof GrainTurnContext ? ctx.services : undefined;
}

/**
 * The state epoch function of the context's activation (see fencedEpoch: the claim's epoch,
 * refused once the member is fenced); undefined for a context that is not a turn's.
 */
export function stateEpochOf(ctx: GrainContext): (() => number) | undefined {
  return ctx instanceof GrainTurnContext ? ctx.stateEpoch() : undefined;
}

import type { Context as TraceContext } from '@opentelemetry/api';
import type { Context, PID } from '@granary/core';
import type { GrainReminders } from '../reminders/reminder';

/**
 * A grain: a virtual actor addressed by `kind/identity`. The runtime activates it on its first
 * message on the member that owns its shard, runs `onActivate` before any message, and
 * `onDeactivate` when it passivates (idle), drains (rebalance, shutdown) or loses its shard.
 *
 * @example
 * class Counter implements Grain {
 *   private n = 0;
 *   receive(ctx: GrainContext) { return ++this.n; } // a returned value is the reply
 * }
 */
export interface Grain {
  /** Runs before the first message; messages wait (in order) until it settles. */
  onActivate?(ctx: GrainContext): void | Promise<void>;
  /** Runs once when the activation ends; `reason` is 'idle', 'rebalance', 'shutdown', ... */
  onDeactivate?(reason: DeactivationReason): void | Promise<void>;
  /**
   * Handles one message. A value other than undefined (or a promise of one) is the reply unless
   * `ctx.respond` was called; a throw reaches a requesting caller as GrainError.
   */
  receive(ctx: GrainContext): unknown;
}

/** Why an activation ended. */
export type DeactivationReason =
  /** Idle longer than the kind's idleTimeoutMs. */
  | 'idle'
  /** Its shard moved to another member. */
  | 'rebalance'
  /** This member is leaving the cluster. */
  | 'shutdown'
  /** This member lost its lease or its claim on the shard (fenced). */
  | 'not-owner'
  /** The grain asked for it with ctx.deactivate(). */
  | 'requested'
  /** onActivate threw. */
  | 'activation-failed'
  /** A turn ran past the kind's turnTimeoutMs; the activation ended when the turn did. */
  | 'turn-timeout'
  /**
   * A write or clear of the kind's state conflicted (another activation or owner wrote), found
   * the state lost, or was refused by the store (StateWriteRefusedError).
   */
  | 'state-conflict';

/** Every {@link DeactivationReason} (the metrics report each at 0 from the start). */
export const DEACTIVATION_REASONS: readonly DeactivationReason[] = [
  'idle',
  'rebalance',
  'shutdown',
  'not-owner',
  'requested',
  'activation-failed',
  'turn-timeout',
  'state-conflict',
];

/** Options of a grain call (`cluster.request`, `ctx.request`, generated clients). */
export interface GrainCallOptions {
  /**
   * Deadline of the call in ms, retries included (never past the caller's own deadline).
   * @default the cluster's requestTimeoutMs
   */
  timeoutMs?: number;
  /**
   * Aborts the call and its retries.
   * @default undefined
   */
  signal?: AbortSignal;
  /**
   * The call may be applied more than once: when the owner dies after the call reached it, retry
   * on the next owner instead of failing with CallOutcomeUnknownError.
   * @default false
   */
  idempotent?: boolean;
  /**
   * How many times the call may be sent again after OverloadedError (a bound refused it: a full
   * mailbox, a saturated owner, ...), or after an `idempotent` call's outcome is unknown (then
   * the call fails with CallOutcomeUnknownError once they are spent). Either kind of re-send also
   * needs room in the member's retry budget (overload.retryBudget) and a deadline that leaves
   * time for the backoff and another attempt; else the call fails with the error it got.
   * Failures that provably did not reach the grain (not the owner, no owner yet, the owner's
   * endpoint not reached) are always retried inside the deadline and do not count; an error
   * thrown by grain code is never retried.
   * @default unlimited (the retry budget and the deadline decide)
   */
  retries?: number;
  /**
   * The OpenTelemetry context the call joins: its client span's parent, and the W3C trace
   * context (`traceparent`, `tracestate`, baggage) its messages carry to the grain. For a caller
   * that received a trace context from elsewhere (a gateway, a queue consumer) and has no span
   * of its own to make active; a call made inside a grain turn always joins the turn's span.
   * @default the active context (`context.active()`)
   */
  traceContext?: TraceContext;
}

/**
 * What a grain's handlers get: who it is, the current message, calls that carry the chain, and
 * (`S`) the state its kind declares.
 */
export interface GrainContext<S = unknown> {
  /** The grain's identity within its kind. */
  readonly identity: string;
  /** The grain's kind. */
  readonly kind: string;
  /** Unique per activation (never reused, across members and restarts). */
  readonly activationId: string;
  /** The cluster member hosting this activation. */
  readonly cluster: GrainClusterHandle;
  /** The core actor context of the current turn (the activation is a core actor). */
  readonly core: Context;
  /** The current message (undefined in onActivate). */
  readonly message: unknown;
  /** Where replies go: the caller's future, a send's `sender` option, or undefined. */
  readonly sender: PID | undefined;
  /** The current call's deadline, epoch ms (Infinity when the message has none). */
  readonly deadline: number;
  /** Ms left until the deadline (Infinity when none). */
  readonly remainingMs: number;
  /** Aborts at the deadline (created on first use). */
  readonly signal: AbortSignal;
  /** The id of the call chain this message belongs to. */
  readonly chainId: string;
  /** The epoch of the shard claim this activation runs under: the fencing token for state. */
  readonly epoch: number;
  /**
   * Timers of this activation: each fire is a turn of the grain; cancelled when it deactivates;
   * they do not keep it from passivating unless created with `keepAlive`.
   */
  readonly timers: GrainTimers;
  /**
   * Durable reminders and one-off jobs of this grain: they survive passivation and the
   * member's death, and wake the grain with a ReminderFire message (`isReminderFire`).
   * @throws RemindersNotConfiguredError when the cluster was started without `reminders`.
   */
  readonly reminders: GrainReminders;
  /** Replies to the caller; an Error reaches it as GrainError. */
  respond(message: unknown): void;
  /** Calls another grain; the deadline and call chain go with it (deadlocks fail fast). */
  request<T = unknown>(
    kind: string,
    identity: string,
    message: unknown,
    options?: GrainCallOptions,
  ): Promise<T>;
  /** Sends to another grain without waiting for a reply; its responses go to `sender`. */
  send(kind: string, identity: string, message: unknown, options?: GrainSendOptions): void;
  /** Deactivates this grain once the current turn has finished. */
  deactivate(): void;
  /**
   * The grain's state, when its kind declares `state` (loaded before the first message; replace
   * it or change it in place). Throws StateNotLoadedError when the kind declares none.
   */
  state: S;
  /**
   * Stores the state, fenced by version and shard epoch; resolves with the new version. A
   * conflict deactivates the grain and rejects with InconsistentStateError, which reaches the
   * caller as it is if the handler lets it through.
   */
  writeState(): Promise<number>;
  /** Removes the stored state (the state is `initial()` again); rejects like writeState(). */
  clearState(): Promise<void>;
}

/** The part of a Cluster a grain sees (kept structural so grains do not import the class). */
export interface GrainClusterHandle {
  readonly id: string;
  request<T = unknown>(
    kind: string,
    identity: string,
    message: unknown,
    options?: GrainCallOptions,
  ): Promise<T>;
  send(kind: string, identity: string, message: unknown, options?: GrainSendOptions): void;
}

/** Options of a grain send. */
export interface GrainSendOptions {
  /**
   * The grain sees this as `ctx.sender`: what it responds goes to this actor.
   * @default undefined (the grain has no one to answer)
   */
  sender?: PID;
}

/** Options of a grain timer. */
export interface GrainTimerOptions {
  /**
   * The timer's turns count as activity, so a grain with a live timer does not passivate while
   * it fires more often than the kind's idleTimeoutMs. Without it a timer never keeps a grain
   * alive: the grain passivates as if the timer did not exist, and the timer dies with it.
   * @default false
   */
  keepAlive?: boolean;
}

/** Options of a periodic grain timer. */
export interface GrainEveryOptions extends GrainTimerOptions {
  /**
   * Delay of the first turn in ms.
   * @default the period
   */
  firstDelayMs?: number;
}

/** What a timer runs: one turn of the grain (a returned promise holds the grain's queue). */
export type GrainTimerHandler = (ctx: GrainContext) => unknown;

/** A scheduled grain timer. */
export interface GrainTimer {
  /** Stops it; a turn already queued for it does not run. Idempotent. */
  cancel(): void;
  /** False once cancelled, once a one-shot timer has run, or once the activation ended. */
  readonly active: boolean;
}

/**
 * Timers of one activation (`ctx.timers`): not durable, they live and die with the activation.
 * Each fire is a turn of the grain, queued in its mailbox like a message (never concurrent with
 * another turn), scheduled on the actor system's timer wheel (no Node timer per grain timer).
 * Use reminders for work that must survive passivation or the member's death.
 *
 * @example
 * onActivate(ctx) {
 *   ctx.timers.every(1000, (turn) => this.flush(turn)); // flushes while active
 * }
 */
export interface GrainTimers {
  /** Runs `handler` once, as a turn of the grain, `delayMs` from now (never earlier). */
  after(delayMs: number, handler: GrainTimerHandler, options?: GrainTimerOptions): GrainTimer;
  /**
   * Runs `handler` every `periodMs` as a turn of the grain. A fire due while the previous one is
   * still queued or running is dropped (fires never pile up behind a slow turn).
   */
  every(periodMs: number, handler: GrainTimerHandler, options?: GrainEveryOptions): GrainTimer;
  /** Live timers of this activation. */
  readonly size: number;
}

import type { PID } from '@granary/core';
import type { Entry } from '@granary/core/internal';
import type { Context as TraceContext } from '@opentelemetry/api';
import type { DeactivationReason, Grain } from './grain';
import type { TurnGrain, TurnHost } from './grain-context';
import type { ActivationState } from './grain-state';
import type { KindStats } from './grain-stats';
import type { ActivationTimerSet } from './grain-timers';
import type { TurnWatch, WatchedTurn } from './turn-watch';
import type { SpannedGrain } from '../telemetry/grain-spans';

// What an activation is made of, apart from its turns (activation.ts): the host it talks to, the
// parts its start and end (internal/activation-start.ts, activation-end.ts) work on, the state
// few activations need, and its lifecycle messages.

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

/**
 * The per-kind host an activation talks to: the kind's Activator (its definition, its shard
 * gate, the member's services, and the activation lifecycle).
 */
export interface ActivationHost extends TurnHost {
  /** onActivate is about to run (the activation log). */
  activated(a: HostedActivation): void;
  /** onActivate finished (`error`: it failed) after `ms` (metrics; undefined when not timed). */
  activationDone(a: HostedActivation, ms: number | undefined, error: unknown): void;
  /**
   * A turn finished; `influencing`: it counts as activity for passivation. `stamp`: the idle
   * stamp (whole ms, rounded up) of the time the turn was timed to end at, when it was timed.
   */
  turnEnded(a: HostedActivation, influencing: boolean, stamp?: number): void;
  /** A call expired in the mailbox and was dropped without a turn. */
  dropped(a: HostedActivation): void;
  /** Asks `a` to end after the messages already routed to it. */
  requestDeactivate(a: HostedActivation, reason: DeactivationReason): void;
  /** onDeactivate ran: the activation is over. */
  ended(a: HostedActivation, reason: DeactivationReason): void;
  /** Answers `to` with NotOwnerError for `identity` (this member no longer serves the shard). */
  notOwner(to: PID | undefined, identity: string, shard: number): void;
  /** Watches awaiting turns (undefined when the kind has neither longTurnMs nor turnTimeoutMs). */
  readonly watch: TurnWatch<ActivationTurn> | undefined;
  /** A synchronous turn took `ms`, past the kind's longTurnMs. */
  longTurn(a: HostedActivation, ms: number, running: boolean): void;
  /** Answers `to` with TurnTimeoutError: the activation's stuck turn still runs. */
  stuckReply(a: HostedActivation, to: PID | undefined): void;
  /** Served-turn statistics (undefined unless enabled: the admin API turns them on). */
  readonly stats: KindStats | undefined;
}

/** An awaiting turn of an activation, as the kind's TurnWatch follows it. */
export interface ActivationTurn extends WatchedTurn {
  readonly activation: HostedActivation;
}

/**
 * An activation as its start, its end and its host see it (implemented by Activation; the
 * host's methods are given Activations).
 */
export interface HostedActivation extends TurnGrain, SpannedGrain {
  readonly host: ActivationHost;
  /** The grain instance (made when Started runs). */
  grain: Grain | undefined;
  /** What few activations need (see Rare). */
  rare: Rare | undefined;
  /**
   * The deadline of the call that started it (epoch ms, undefined: none); onActivate answers
   * before it. Cleared when activation starts.
   */
  firstDeadline: number | undefined;
}

/** What few activations need: allocated on first use, so an idle grain does not carry it. */
export class Rare {
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

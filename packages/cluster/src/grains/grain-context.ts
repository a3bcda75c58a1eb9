import { randomBytes } from 'node:crypto';
import type { Context, PID, TimerHandle } from '@granary/core';
import type { Activation } from './activation';
import type { GrainCallOptions, GrainClusterHandle, GrainContext, GrainSendOptions } from './grain';
import { H_ACK, H_CHAIN, H_REPLY_TO, pathOf } from './internal/call-headers';
import { failureOf } from './internal/control-replies';
import type { GrainHost, ParentCall } from './internal/grain-host';

/** Chain ids: a random per-process prefix and a counter (randomBytes per call costs ~5 µs). */
const CHAIN_PREFIX = `${randomBytes(6).toString('hex')}.`;
let chainSeq = 0;

function newChainId(): string {
  return `${CHAIN_PREFIX}${++chainSeq}`;
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

  constructor(
    private readonly host: GrainHost,
    private readonly activation: Activation,
    readonly core: Context,
    readonly message: unknown,
    private readonly header: Readonly<Record<string, string>> | undefined,
    /** onActivate: no message, no sender. */
    lifecycle: boolean,
    /** The call's deadline as it travelled with the request (core's `ctx.deadline`). */
    deadline: number | undefined,
  ) {
    this.due = deadline ?? Infinity;
    this.from = lifecycle ? undefined : UNREAD;
  }

  get sender(): PID | undefined {
    const from = this.from;
    return from === UNREAD ? (this.from = this.core.sender) : from;
  }

  /** @internal the turn returned a promise: fix the sender before the core context moves on. */
  pin(): void {
    if (this.from === UNREAD) this.from = this.core.sender;
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
    return this.activation.slot.def.name;
  }

  get activationId(): string {
    return this.activation.id;
  }

  get cluster(): GrainClusterHandle {
    return this.host.cluster;
  }

  get deadline(): number {
    return this.due;
  }

  get remainingMs(): number {
    return Math.max(0, this.deadline - Date.now());
  }

  /** The incoming call's chain id; a call from outside any grain starts a chain here. */
  get chainId(): string {
    return (this.cachedChain ??= this.header?.[H_CHAIN] ?? newChainId());
  }

  get epoch(): number {
    return this.host.epochOf(this.kind, this.activation.shard);
  }

  get signal(): AbortSignal {
    if (this.abort === undefined) {
      this.abort = new AbortController();
      const remaining = this.deadline - Date.now();
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
    this.reply(message instanceof Error ? failureOf(message) : message);
  }

  request<T = unknown>(
    kind: string,
    identity: string,
    message: unknown,
    options?: GrainCallOptions,
  ): Promise<T> {
    return this.host.call<T>(kind, identity, message, options, this.parent());
  }

  send(kind: string, identity: string, message: unknown, options?: GrainSendOptions): void {
    this.host.send(kind, identity, message, this.parent(), options?.sender);
  }

  deactivate(): void {
    this.host.requestDeactivate(this.activation, 'requested');
  }

  /** @internal the turn ended with `value`: it is the reply unless respond() was called. */
  finish(value: unknown): void {
    this.abortTimer?.cancel();
    if (value !== undefined && !this.responded && this.answerable) this.respond(value);
  }

  /** @internal the turn threw: a requester gets GrainError, a send is logged. */
  fail(error: unknown): void {
    this.abortTimer?.cancel();
    if (!this.responded && this.answerable) {
      this.responded = true;
      this.reply(failureOf(error));
    } else {
      this.host.logger.error(
        { err: error, grain: `${this.kind}/${this.identity}` },
        'grain turn failed with no caller to tell',
      );
    }
  }

  /** Unpinned (still inside the turn): through the core context, which may skip the PID. */
  private reply(message: unknown): void {
    const from = this.from;
    if (from === UNREAD) this.core.respond(message);
    else this.host.reply(from, message);
  }

  /** The chain this turn's outgoing calls carry: this grain joins it unless it is reentrant. */
  private parent(): ParentCall {
    const def = this.activation.slot.def;
    const incoming = pathOf(this.header);
    const path =
      def.alwaysReentrant || def.reentrant(this.message)
        ? incoming
        : [...incoming, `${def.name}/${this.activation.identity}`];
    return { deadline: this.deadline, chainId: this.chainId, path };
  }
}

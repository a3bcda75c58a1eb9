import {
  ReceiveTimeout,
  Restarting,
  Started,
  Stopped,
  Stopping,
  Terminated,
  type Actor,
  type Context,
} from '@granary/core';
import type { Activation } from './activation';
import type { DeactivationReason, Grain } from './grain';
import { GrainTurnContext } from './grain-context';
import { failureOf, type ControlReply } from './internal/control-replies';
import type { GrainHost } from './internal/grain-host';

/** Ends an activation: posted by the activator behind every message already routed to it. */
export class Deactivate {
  constructor(readonly reason: DeactivationReason) {}
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

function isPromise(v: unknown): v is Promise<unknown> {
  return (
    v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function'
  );
}

/**
 * The core actor that runs one activation. The mailbox gives the ordering: `Started` runs
 * onActivate (messages wait behind it), user messages are turns, `Deactivate` runs onDeactivate.
 * Every turn first checks that this member still serves the shard (`canServe`), so a fenced
 * member stops at once. Grain errors never reach core supervision: they are replies.
 */
export class GrainActor implements Actor {
  private grain: Grain | undefined = undefined;
  private failure: ControlReply | undefined = undefined;
  /** Reentrant turns still awaiting. */
  private running = 0;
  private quiet: (() => void) | undefined = undefined;

  constructor(
    private readonly host: GrainHost,
    private readonly activation: Activation,
  ) {}

  receive(ctx: Context): void | Promise<void> {
    const message = ctx.message;
    if (message instanceof Deactivate) return this.deactivate(ctx, message.reason);
    if (message instanceof Started) return this.activate(ctx);
    if (isLifecycle(message)) return;
    return this.turn(ctx, message);
  }

  /** Runs onActivate; synchronous (no awaited turn) unless onActivate returns a promise. */
  private activate(ctx: Context): void | Promise<void> {
    const a = this.activation;
    this.host.activated(a);
    let pending: unknown;
    try {
      this.grain = a.slot.def.factory();
      if (this.grain.onActivate === undefined) return;
      const deadline = Date.now() + this.host.activationTimeoutMs;
      const gctx = new GrainTurnContext(
        this.host,
        a,
        ctx,
        undefined,
        undefined,
        undefined,
        deadline,
      );
      pending = this.grain.onActivate(gctx);
    } catch (err) {
      return this.activationFailed(err);
    }
    if (isPromise(pending))
      return pending.then(undefined, (err: unknown) => this.activationFailed(err));
  }

  private activationFailed(err: unknown): void {
    const a = this.activation;
    this.failure = failureOf(err);
    this.host.logger.warn(
      { err, grain: `${a.slot.def.name}/${a.identity}` },
      'grain activation failed',
    );
    this.host.requestDeactivate(a, 'activation-failed');
  }

  private turn(ctx: Context, message: unknown): void | Promise<void> {
    const a = this.activation;
    const def = a.slot.def;
    const sender = ctx.sender;
    const influencing = !def.idleNeutral(message);
    if (this.failure !== undefined) {
      this.host.reply(sender, this.failure);
      return this.host.turnEnded(a, influencing);
    }
    if (!this.host.canServe(def.name, a.shard)) {
      this.host.replyNotOwner(sender, def.name, a.shard);
      this.host.requestDeactivate(a, 'not-owner');
      return this.host.turnEnded(a, influencing);
    }
    const gctx = new GrainTurnContext(this.host, a, ctx, message, sender, ctx.headers);
    let result: unknown;
    try {
      result = this.grain!.receive(gctx);
    } catch (err) {
      gctx.fail(err);
      return this.host.turnEnded(a, influencing);
    }
    if (!isPromise(result)) {
      gctx.finish(result);
      return this.host.turnEnded(a, influencing);
    }
    const settled = result.then(
      (v) => gctx.finish(v),
      (e: unknown) => gctx.fail(e),
    );
    if (!def.reentrant(message)) return settled.then(() => this.host.turnEnded(a, influencing));
    // Reentrant: the mailbox moves on; the turn finishes whenever its promise settles.
    this.running++;
    void settled.then(() => {
      this.host.turnEnded(a, influencing);
      if (--this.running === 0 && this.quiet) this.quiet();
    });
  }

  private async deactivate(ctx: Context, reason: DeactivationReason): Promise<void> {
    const a = this.activation;
    if (this.running > 0) await new Promise<void>((resolve) => (this.quiet = resolve));
    if (this.failure === undefined && this.grain?.onDeactivate) {
      try {
        await this.grain.onDeactivate(reason);
      } catch (err) {
        this.host.logger.error(
          { err, grain: `${a.slot.def.name}/${a.identity}`, reason },
          'onDeactivate failed',
        );
      }
    }
    this.host.deactivated(a, reason);
    this.host.ended(a);
    ctx.stop(ctx.self);
  }
}

import {
  Restarting,
  Started,
  Stopped,
  Stopping,
  Terminated,
  type Actor,
  type Context,
} from '@granary/core';
import { FUTURE_PREFIX, entryOf } from '@granary/core/internal';
import { PoolUnhandledRequestError } from '../errors';
import { InspectPool } from '../urgent-requests';
import { DrainPool, PendingMessage, UrgentMessage } from './pool-messages';
import type { PoolRouter } from './pool-router';

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | undefined)?.then === 'function';
}

function isLifecycle(message: unknown): boolean {
  return (
    message instanceof Restarting ||
    message instanceof Started ||
    message instanceof Stopping ||
    message instanceof Stopped
  );
}

function typeName(message: unknown): string {
  if (message === null || typeof message !== 'object') return typeof message;
  return message.constructor?.name ?? 'Object';
}

/**
 * The pool actor: parent and watcher of the workers, and the only place the behavior's
 * callbacks run. Its mailbox sees lifecycle messages, workers' `Terminated`, urgent messages
 * (wrapped by the router) and the few user messages that arrived before the workers existed.
 */
export class PoolActor implements Actor {
  constructor(private readonly router: PoolRouter) {}

  receive(ctx: Context): void | Promise<void> {
    const m = ctx.message;
    const router = this.router;
    if (router.state === 'suspended' && !isLifecycle(m)) router.resume();
    if (m instanceof PendingMessage) {
      router.route(entryOf(m.message, ctx.sender, m.header, m.deadline));
    } else if (m instanceof UrgentMessage) return this.urgent(ctx, m.message);
    else if (m instanceof Terminated) router.onTerminated(m.who);
    else if (m instanceof DrainPool) router.drain();
    else if (m instanceof Started) router.start(ctx);
    else if (m instanceof Restarting) router.restarting();
    else if (m instanceof Stopping) router.stopping();
    else if (m instanceof Stopped) {
      router.stopped();
      return router.behavior.terminate?.('stopped');
    }
  }

  /** Urgent lane: a request (a future is the sender) goes to handleCall, else handleMessage. */
  private urgent(ctx: Context, message: unknown): void | Promise<void> {
    const router = this.router;
    const behavior = router.behavior;
    const isCall = ctx.sender !== undefined && ctx.sender.id.startsWith(FUTURE_PREFIX);
    if (!isCall) {
      if (behavior.handleMessage) return this.guard(() => behavior.handleMessage!(router, message));
      ctx.system.logger
        .child({ component: 'pool' })
        .warn(
          { pool: router.self.toString(), type: typeName(message) },
          'urgent message not handled by the pool (no handleMessage)',
        );
      ctx.system.deadLetters.publish(router.self, message, ctx.sender, 'pool-unhandled');
      return;
    }
    if (message instanceof InspectPool) {
      ctx.respond(router.inspect());
      return;
    }
    let reply: unknown;
    try {
      reply = behavior.handleCall?.(router, message);
    } catch (err) {
      ctx.respond(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    if (!isThenable(reply)) return this.reply(ctx, message, reply);
    return Promise.resolve(reply).then(
      (value) => this.reply(ctx, message, value),
      (err: unknown) => ctx.respond(err instanceof Error ? err : new Error(String(err))),
    );
  }

  /**
   * Runs a callback whose failure fails the pool actor; the router stops routing and
   * spawning at once (before the supervisor's decision arrives), so no worker is spawned
   * into a restart and no work is sent to workers about to be stopped.
   */
  private guard(callback: () => void | Promise<void>): void | Promise<void> {
    const fail = (err: unknown): never => {
      this.router.suspend();
      throw err;
    };
    let result: void | Promise<void>;
    try {
      result = callback();
    } catch (err) {
      return fail(err);
    }
    return isThenable(result) ? Promise.resolve(result).catch(fail) : result;
  }

  private reply(ctx: Context, request: unknown, reply: unknown): void {
    const pool = this.router.self.toString();
    ctx.respond(
      reply === undefined ? new PoolUnhandledRequestError(pool, typeName(request)) : reply,
    );
  }
}

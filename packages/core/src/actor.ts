import type { Context } from './context';

/**
 * An actor: `receive` is called once per message, never concurrently. Returning a promise
 * makes the turn async: the actor takes no other user message until it settles.
 *
 * @example
 * class Counter implements Actor {
 *   private n = 0;
 *   receive(ctx: Context): void {
 *     if (ctx.message === 'inc') this.n++;
 *     else if (ctx.message === 'get') ctx.respond(this.n);
 *   }
 * }
 */
export interface Actor {
  receive(ctx: Context): void | Promise<void>;
}

/** An actor as a function, or a behavior for `ctx.become`. */
export type ReceiveFunc = (ctx: Context) => void | Promise<void>;

/** Makes a fresh actor instance (on spawn and on every restart). */
export type Producer = () => Actor;

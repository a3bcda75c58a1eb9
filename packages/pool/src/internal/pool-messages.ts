/**
 * Messages between a pool's router (its PID) and the pool actor. The classes are private to
 * the package, so a user's message can never be mistaken for one of them.
 */

/** An urgent message or request for the pool's own callbacks (never forwarded). */
export class UrgentMessage {
  constructor(
    readonly message: unknown,
    readonly header: Record<string, string> | undefined,
    /** The request's deadline, if it had one (core's `ctx.deadline`). */
    readonly deadline?: number,
  ) {}
}

/**
 * A user-lane message that arrived while the pool had no workers (starting or restarting):
 * the pool actor forwards it once the workers exist.
 */
export class PendingMessage {
  constructor(
    readonly message: unknown,
    readonly header: Record<string, string> | undefined,
    /** The request's deadline, if it had one: the worker still sees it. */
    readonly deadline?: number,
  ) {}
}

/** A PoisonPill reached the pool: let every worker finish its queue, then stop. */
export class DrainPool {}

/** The one DrainPool instance (it carries no data). */
export const DRAIN_POOL = new DrainPool();

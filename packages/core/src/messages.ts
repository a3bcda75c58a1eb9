import type { PID } from './pid';

/**
 * Marks a message type that does not reset the receive timeout: put `[NotInfluenceReceiveTimeout] = true`
 * on the class (or the object), e.g. for periodic health pings.
 *
 * @example
 * class Tick { readonly [NotInfluenceReceiveTimeout] = true; }
 */
export const NotInfluenceReceiveTimeout: unique symbol = Symbol.for(
  'granary.notInfluenceReceiveTimeout',
);

/** Delivered to `receive` first, after spawn and after a restart. */
export class Started {}
/** Delivered to `receive` when the actor begins to stop (children still running). */
export class Stopping {}
/** Delivered to `receive` last, after every child has stopped. */
export class Stopped {}
/** Delivered to the failed instance before it is replaced by a fresh one. */
export class Restarting {}
/** Delivered when no (influencing) user message arrived within the receive timeout. */
export class ReceiveTimeout {
  readonly [NotInfluenceReceiveTimeout] = true;
}
/** A user message that stops the actor once the messages queued before it are processed. */
export class PoisonPill {}

/** System message: start watching the receiver; `watcher` gets `Terminated` when it stops. */
export class Watch {
  constructor(readonly watcher: PID) {}
}
/** System message: stop watching. */
export class Unwatch {
  constructor(readonly watcher: PID) {}
}

/** Why a watched process is gone. */
export type TerminatedReason = 'stopped' | 'failed' | 'address-terminated' | 'not-found';

/** Sent to watchers (and to the parent) when a process stops. */
export class Terminated {
  constructor(
    readonly who: PID,
    readonly why: TerminatedReason,
  ) {}
}

/** System message: stop after the current message (what `ctx.stop(pid)` sends). */
export class Stop {
  constructor(
    /** What watchers are told: `failed` when a supervisor stopped a failing actor. */
    readonly why: TerminatedReason = 'stopped',
  ) {}
}

/** The shared instances the runtime sends (the classes carry no data). */
export const STARTED = new Started();
export const STOPPING = new Stopping();
export const STOPPED = new Stopped();
export const RESTARTING = new Restarting();
export const RECEIVE_TIMEOUT = new ReceiveTimeout();
export const POISON_PILL = new PoisonPill();
export const STOP = new Stop();

/** True if the message does not reset the receive timeout. */
export function isNotInfluencing(message: unknown): boolean {
  return (
    typeof message === 'object' &&
    message !== null &&
    (message as { [NotInfluenceReceiveTimeout]?: boolean })[NotInfluenceReceiveTimeout] === true
  );
}

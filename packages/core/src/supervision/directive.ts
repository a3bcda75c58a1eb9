import type { PID } from '../pid';

/**
 * What a supervisor does with a failed child: `resume` (keep the instance, next message),
 * `restart` (fresh instance, same mailbox), `stop`, or `escalate` (the supervisor fails too).
 */
export type Directive = 'resume' | 'restart' | 'stop' | 'escalate';

/** Chooses the directive for a failure. */
export type Decider = (reason: unknown, child: PID) => Directive;

/** Restart on every failure (the default, as in Akka and proto-actor). */
export const restartDecider: Decider = () => 'restart';

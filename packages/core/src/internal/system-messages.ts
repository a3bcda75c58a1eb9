import type { PID } from '../pid';
import type { RestartStatistics } from '../supervision/restart-statistics';

/** Child → parent: I failed; decide (my user lane is suspended until you do). */
export class Failure {
  constructor(
    readonly who: PID,
    readonly reason: unknown,
    readonly stats: RestartStatistics,
    readonly message: unknown,
  ) {}
}

/** Parent → child: restart with a fresh instance (the mailbox is kept). */
export class Restart {}
/** Parent → child: resume the suspended user lane with the same instance. */
export class ResumeMailbox {}

/** A `reenterAfter` callback, run as a turn with the message that started it. */
export class Continuation {
  constructor(
    /** The lane entry (message or envelope) current when reenterAfter was called. */
    readonly entry: unknown,
    readonly run: () => void | Promise<void>,
  ) {}
}

export const RESTART = new Restart();
export const RESUME_MAILBOX = new ResumeMailbox();

/**
 * What a send or a request meets inside this process: no reply in time, a full mailbox, a dead
 * letter, a taken name, a cancelled request, a stopped system. Re-exported by `errors.ts`.
 */
import { GranaryError } from './granary-error';

/** A request got no reply within its `timeoutMs`. */
export class TimeoutError extends GranaryError {
  static override readonly code = 'ERR_TIMEOUT';
  override readonly name = 'TimeoutError';
  constructor(
    /** The target of the request, as `address/id`. */
    readonly target: string,
    /** The timeout that elapsed. */
    readonly timeoutMs: number,
  ) {
    super(`request to ${target} timed out after ${timeoutMs} ms (timeoutMs)`);
  }

  /**
   * Without a stack, as a request's timer makes it: its stack would only show the timer wheel,
   * and under overload it is made once per timed-out request, where a capture costs more than
   * the rest of the timeout's handling.
   */
  static of(target: string, timeoutMs: number): TimeoutError {
    const saved = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      return new TimeoutError(target, timeoutMs);
    } finally {
      Error.stackTraceLimit = saved;
    }
  }
}

/** The bounded user lane of the target was full; the message was not enqueued. */
export class MailboxFullError extends GranaryError {
  static override readonly code = 'ERR_MAILBOX_FULL';
  override readonly name = 'MailboxFullError';
  constructor(
    readonly target: string,
    /** The capacity of the full lane. */
    readonly capacity: number,
  ) {
    super(`mailbox of ${target} is full (${capacity} messages, mailbox.capacity)`);
  }
}

/** The message could not be delivered (no such actor, or it stopped); it went to dead letters. */
export class DeadLetterError extends GranaryError {
  static override readonly code = 'ERR_DEAD_LETTER';
  override readonly name = 'DeadLetterError';
  constructor(
    readonly target: string,
    /** Why it was dead-lettered, e.g. `not-found`, `stopped`. */
    readonly reason: string,
  ) {
    super(`message to ${target} went to dead letters (${reason})`);
  }
}

/** `spawnNamed` was given a name that a live actor already has. */
export class NameExistsError extends GranaryError {
  static override readonly code = 'ERR_NAME_EXISTS';
  override readonly name = 'NameExistsError';
  constructor(readonly id: string) {
    super(`an actor with id "${id}" already exists (spawnNamed name)`);
  }
}

/** A request was cancelled through its `signal`. */
export class AbortError extends GranaryError {
  static override readonly code = 'ERR_ABORTED';
  override readonly name = 'AbortError';
  constructor(
    readonly target: string,
    cause?: unknown,
  ) {
    super(`request to ${target} was aborted (signal)`, { cause });
  }
}

/** The actor system was shut down: no more spawns, and pending requests are rejected. */
export class SystemShutdownError extends GranaryError {
  static override readonly code = 'ERR_SHUTDOWN';
  override readonly name = 'SystemShutdownError';
  constructor(readonly system: string) {
    super(`actor system "${system}" is shut down (shutdown)`);
  }
}

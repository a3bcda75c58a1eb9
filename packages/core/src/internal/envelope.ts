import type { PID } from '../pid';

/**
 * How a user message with a sender or headers sits in a lane. A message without either is
 * enqueued bare, so a plain tell allocates nothing; `instanceof Envelope` tells them apart
 * (a user's own object can never be an instance of this private class).
 */
export class Envelope {
  /** @internal The sender as given (a request's future makes its PID on first read). */
  protected from: PID | undefined;

  constructor(
    readonly message: unknown,
    sender: PID | undefined,
    readonly header: Record<string, string> | undefined,
  ) {
    this.from = sender;
  }

  /** Who to reply to. */
  get sender(): PID | undefined {
    return this.from;
  }
}

/** The message inside a lane entry. */
export function messageOf(entry: unknown): unknown {
  return entry instanceof Envelope ? entry.message : entry;
}

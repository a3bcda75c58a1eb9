import type { PID } from '../pid';

/**
 * How a user message with a sender or headers sits in a lane. A message without either is
 * enqueued bare, so a plain tell allocates nothing; `instanceof Envelope` tells them apart
 * (a user's own object can never be an instance of this private class).
 */
export class Envelope {
  constructor(
    readonly message: unknown,
    /** Set after construction only by FutureProcess (a request's envelope is its future). */
    public sender: PID | undefined,
    readonly header: Record<string, string> | undefined,
  ) {}
}

/** The message inside a lane entry. */
export function messageOf(entry: unknown): unknown {
  return entry instanceof Envelope ? entry.message : entry;
}

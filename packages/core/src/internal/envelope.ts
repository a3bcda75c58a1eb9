import type { PID } from '../pid';

/**
 * How a user message with a sender, headers or a deadline sits in a lane (an `Entry`). A message without either is
 * enqueued bare, so a plain tell allocates nothing; `instanceof Envelope` tells them apart
 * (a user's own object can never be an instance of this private class).
 */
export class Envelope {
  /** @internal The sender as given (a request's future makes its PID on first read). */
  protected from: PID | undefined;
  /** @internal The request's deadline, epoch ms (a request's future sets it from its timeout). */
  protected due: number | undefined;

  constructor(
    readonly message: unknown,
    sender: PID | undefined,
    readonly header: Record<string, string> | undefined,
    deadline?: number,
  ) {
    this.from = sender;
    this.due = deadline;
  }

  /** Who to reply to. */
  get sender(): PID | undefined {
    return this.from;
  }

  /** Epoch ms after which the requester no longer waits for an answer, if it said. */
  get deadline(): number | undefined {
    return this.due;
  }
}

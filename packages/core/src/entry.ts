import { Envelope } from './internal/envelope';
import type { PID } from './pid';
import type { Entry } from './process';

/**
 * The readers and the maker of an {@link Entry} (a bare message or core's envelope), like
 * protoactor-go's `UnwrapEnvelope*`: the only code outside core's runtime that looks inside one.
 */

/** An entry for `post`: the bare message unless it has a sender, headers or a deadline. */
export function entryOf(
  message: unknown,
  sender?: PID,
  header?: Record<string, string>,
  deadline?: number,
): Entry {
  return (
    sender === undefined && header === undefined && deadline === undefined
      ? message
      : new Envelope(message, sender, header, deadline)
  ) as Entry;
}

/** The message of an entry. */
export function entryMessage(entry: Entry): unknown {
  return entry instanceof Envelope ? entry.message : entry;
}

/** The sender of an entry, if it has one (a request's sender is its future). */
export function entrySender(entry: Entry): PID | undefined {
  return entry instanceof Envelope ? entry.sender : undefined;
}

/** The headers of an entry, if it has any. */
export function entryHeader(entry: Entry): Record<string, string> | undefined {
  return entry instanceof Envelope ? entry.header : undefined;
}

/** The deadline of an entry (epoch ms), if it is a request that has one. */
export function entryDeadline(entry: Entry): number | undefined {
  return entry instanceof Envelope ? entry.deadline : undefined;
}

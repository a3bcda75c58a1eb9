import { Envelope } from './internal/envelope';
import type { PID } from './pid';
import type { ProcessRegistry } from './process-registry';

/** A user message with its metadata, as it crosses the process seam (and the wire). */
export interface MessageEnvelope {
  message: unknown;
  /** Who to reply to; a request's sender is its future process. */
  sender?: PID;
  /** String headers, carried across nodes. */
  header?: Record<string, string>;
  /** `'urgent'` uses the target's urgent lane, drained before ordinary user messages. */
  priority?: 'urgent';
  /**
   * A request's deadline, epoch ms: the requester stops waiting then. Set from the request's
   * `timeoutMs` and carried across nodes (as the remaining time, so clocks need not agree), so
   * the target can see it as `ctx.deadline`.
   */
  deadline?: number;
}

/**
 * Anything a PID can point at: a local actor, a request's future, the dead-letter sink, or a
 * remote endpoint (plugged in through `registry.addAddressResolver`).
 */
export interface Process {
  sendUserMessage(pid: PID, envelope: MessageEnvelope): void;
  /**
   * Optional fast path of `sendUserMessage` for a process that is not local but can take a
   * lane entry (see {@link LocalProcess}) as it is: a remote endpoint, a prefix route. Saves
   * a MessageEnvelope per send; `urgent` is the priority.
   */
  sendEntry?(pid: PID, entry: unknown, urgent: boolean): void;
  /** Watch | Unwatch | Terminated | Stop and the other system messages. */
  sendSystemMessage(pid: PID, message: unknown): void;
  stop(pid: PID): void;
}

/**
 * A process living in this registry: it is cached on its PIDs (no map lookup per send) and
 * takes user messages through `post` instead of `sendUserMessage` (no MessageEnvelope per
 * message). Actors and request futures are local processes; a custom process (a router) may
 * be one too: `registry.add` caches it when `owner` is that registry. It still implements
 * `sendUserMessage`, which the registry path (remote inbound delivery) keeps using.
 *
 * A lane entry is opaque: the bare message, or core's envelope when it has a sender or
 * headers. Read it with {@link entryMessage} / {@link entrySender} / {@link entryHeader}, make
 * one with {@link laneEntry}, and hand it on unchanged to another local process's `post` (an
 * actor's mailbox) to forward a message with its sender and headers without allocating.
 */
export interface LocalProcess extends Process {
  /** The registry that owns it: a cached PID is only trusted by that registry. */
  readonly owner: ProcessRegistry;
  /** Set when it is removed; a cached PID then falls back to the registry lookup. */
  dead: boolean;
  /** Bound of the user lanes (Infinity when unbounded), for MailboxFullError. */
  readonly capacity: number;
  /**
   * Enqueues a user message: `entry` is a lane entry (see above); `urgent` asks for the urgent
   * lane. Returns false only when a bounded lane is full (nothing was enqueued; the caller
   * decides: dead-letter as `mailbox-full`, reject a request with MailboxFullError, or report
   * false from `trySend`). A process that handles refusal itself returns true.
   */
  post(entry: unknown, urgent: boolean): boolean;
}

/** The message of a lane entry (see {@link LocalProcess}). */
export function entryMessage(entry: unknown): unknown {
  return entry instanceof Envelope ? entry.message : entry;
}

/** The sender of a lane entry, if it has one (a request's sender is its future). */
export function entrySender(entry: unknown): PID | undefined {
  return entry instanceof Envelope ? entry.sender : undefined;
}

/** The headers of a lane entry, if it has any. */
export function entryHeader(entry: unknown): Record<string, string> | undefined {
  return entry instanceof Envelope ? entry.header : undefined;
}

/** The deadline of a lane entry (epoch ms), if it is a request that has one. */
export function entryDeadline(entry: unknown): number | undefined {
  return entry instanceof Envelope ? entry.deadline : undefined;
}

/** A lane entry for `post`: the bare message unless it has a sender, headers or a deadline. */
export function laneEntry(
  message: unknown,
  sender?: PID,
  header?: Record<string, string>,
  deadline?: number,
): unknown {
  return sender === undefined && header === undefined && deadline === undefined
    ? message
    : new Envelope(message, sender, header, deadline);
}

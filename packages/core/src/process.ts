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
}

/**
 * Anything a PID can point at: a local actor, a request's future, the dead-letter sink, or a
 * remote endpoint (plugged in through `registry.addAddressResolver`).
 */
export interface Process {
  sendUserMessage(pid: PID, envelope: MessageEnvelope): void;
  /** Watch | Unwatch | Terminated | Stop and the other system messages. */
  sendSystemMessage(pid: PID, message: unknown): void;
  stop(pid: PID): void;
}

/**
 * A process living in this registry: it can be cached on a PID and takes messages without an
 * envelope allocation. Not part of the public seam.
 * @internal
 */
export interface LocalProcess extends Process {
  /** The registry that owns it: a cached PID is only trusted by that registry. */
  readonly owner: ProcessRegistry;
  /** Set when it is removed; a cached PID then falls back to the registry lookup. */
  dead: boolean;
  /** Bound of the user lanes (Infinity when unbounded), for MailboxFullError. */
  readonly capacity: number;
  /**
   * Enqueues a user message: `entry` is the bare message, or an internal Envelope when it has
   * a sender or headers. Returns false only when a bounded lane is full (nothing was
   * enqueued; the caller decides: dead-letter, reject, or report).
   */
  post(entry: unknown, urgent: boolean): boolean;
}

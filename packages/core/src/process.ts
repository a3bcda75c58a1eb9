import type { PID } from './pid';

/** The brand of {@link Entry}: a type only, nothing at run time. */
declare const ENTRY: unique symbol;

/**
 * A user message as it crosses the process seam: the bare message when it has no sender,
 * headers or deadline (a plain tell allocates nothing), or core's envelope when it has any.
 * Opaque: make one with `entryOf`, read it with `entryMessage` / `entrySender` /
 * `entryHeader` / `entryDeadline` (all in `@granary/core/internal`), and hand it on unchanged
 * to another process's `post` to forward a message with its sender and headers without
 * allocating. A request's future is its own envelope.
 */
export type Entry = { readonly [ENTRY]: true };

/**
 * Anything a PID can point at: a local actor, a request's future, the dead-letter sink, a
 * router, or a remote endpoint (plugged in through `registry.addAddressResolver`). One way in
 * for user messages (`post`), one for system messages, and stop, like protoactor-go's Process.
 */
export interface Process {
  /**
   * Takes a user message for `pid` (the process may stand for many PIDs: a remote node, a
   * prefix route); `urgent` asks for the urgent lane. Returns false only when a bounded lane
   * is full: nothing was taken, and the caller decides (dead-letter as `mailbox-full`, reject
   * a request with MailboxFullError, or report false from `trySend`). A process that handles
   * refusal itself returns true.
   */
  post(pid: PID, entry: Entry, urgent: boolean): boolean;
  /** Watch | Unwatch | Terminated | Stop and the other system messages. */
  sendSystemMessage(pid: PID, message: unknown): void;
  stop(pid: PID): void;
}

/**
 * A process living in one registry: it is cached on its PIDs, so a repeated send costs no map
 * lookup. Actors and request futures are local processes; a router may be one too:
 * `registry.add` (and `addPrefix`) caches it when `owner` is that registry.
 */
export interface LocalProcess extends Process {
  /** The registry that owns it, compared by identity: a cached PID is only trusted by it. */
  readonly owner: object;
  /** Set when it is removed; a cached PID then falls back to the registry lookup. */
  dead: boolean;
  /** Bound of the user lanes (Infinity when unbounded), for MailboxFullError. */
  readonly capacity: number;
}

/**
 * A local actor's process, which knows its own PID: whoever keeps the process need not keep
 * the PID beside it (an idle grain holds one reference fewer).
 */
export interface ActorProcess extends LocalProcess {
  /** The actor's PID. */
  readonly self: PID;
}

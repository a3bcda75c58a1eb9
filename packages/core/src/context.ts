import type { RequestOptions } from './future-process';
import type { PID } from './pid';

// The actor API's types. Two parts are declared by the modules they name, so that this file
// imports neither (each of them imports this one; no import cycle): `SenderContext.system` by
// actor-system.ts, and spawning (`SpawnerContext`, which `Context` extends) with Props in
// props.ts.

/**
 * An actor: `receive` is called once per message, never concurrently. Returning a promise
 * makes the turn async: the actor takes no other user message until it settles.
 *
 * @example
 * class Counter implements Actor {
 *   private n = 0;
 *   receive(ctx: Context): void {
 *     if (ctx.message === 'inc') this.n++;
 *     else if (ctx.message === 'get') ctx.respond(this.n);
 *   }
 * }
 */
export interface Actor {
  receive(ctx: Context): void | Promise<void>;
}

/** An actor as a function, or a behavior for `ctx.become`. */
export type ReceiveFunc = (ctx: Context) => void | Promise<void>;

/** Makes a fresh actor instance (on spawn and on every restart). */
export type Producer = () => Actor;

/** Options of `send` / `trySend`. */
export interface SendOptions {
  /**
   * `'urgent'` puts the message in the target's urgent lane, drained before ordinary user
   * messages (still after system messages).
   * @default undefined
   */
  priority?: 'urgent';
  /**
   * The `ctx.sender` the target sees (plain sends carry none).
   * @default undefined
   */
  sender?: PID | undefined;
  /**
   * String headers for the target's `ctx.headers`.
   * @default undefined
   */
  header?: Record<string, string>;
}

/**
 * Sending, shared by the root context and actor contexts. Also `readonly system: ActorSystem`
 * (declared in actor-system.ts).
 */
export interface SenderContext {
  /** The sending actor; undefined for the root context. */
  readonly self: PID | undefined;
  /**
   * Fire and forget. A missing target or a full mailbox dead-letters the message (counted,
   * published, never silent).
   */
  send(pid: PID, message: unknown, options?: SendOptions): void;
  /** Like send, but returns false (and enqueues nothing) when the target's mailbox is full. */
  trySend(pid: PID, message: unknown, options?: SendOptions): boolean;
  /**
   * Sends with a temporary future as sender and resolves with the reply (`ctx.respond`).
   * Rejects with TimeoutError, AbortError, DeadLetterError (no such target, at once) or
   * MailboxFullError (at once), or with the Error the target responded with.
   */
  request<T = unknown>(pid: PID, message: unknown, options?: RequestOptions): Promise<T>;
}

/**
 * What `receive` gets: the current message and everything an actor can do. It also extends
 * `SpawnerContext` (spawn, spawnNamed, stop, poison; declared in props.ts).
 */
export interface Context extends SenderContext {
  readonly self: PID;
  readonly message: unknown;
  /** Who to reply to (a request's future, or the `sender` option of a send). */
  readonly sender: PID | undefined;
  readonly headers: Readonly<Record<string, string>>;
  /**
   * The current request's deadline, epoch ms, when its requester gave a `timeoutMs` (also
   * across nodes): answering later is useless, so long work can check it. Undefined otherwise.
   */
  readonly deadline: number | undefined;
  readonly parent: PID | undefined;
  readonly children: PID[];
  /** The current actor instance. */
  readonly actor: Actor;
  /** Current receive timeout in ms (0: none). */
  readonly receiveTimeout: number;

  /** Replies to the sender; an Error instance rejects the requester's promise with it. */
  respond(message: unknown): void;
  /** Sends the current message on to `pid`, keeping the original sender and headers. */
  forward(pid: PID): void;
  /** `Terminated { who, why }` arrives as a message when `pid` stops (or does not exist). */
  watch(pid: PID): void;
  unwatch(pid: PID): void;
  /**
   * Delivers `ReceiveTimeout` after `ms` without a user message (types marked
   * NotInfluenceReceiveTimeout do not count), then again every `ms` while idle.
   */
  setReceiveTimeout(ms: number): void;
  cancelReceiveTimeout(): void;
  /** Keeps the current message aside; `unstashAll` puts them back in front of the mailbox. */
  stash(): void;
  unstashAll(): void;
  /** Handles the next messages with `behavior` (stacked; `unbecome` pops it). */
  become(behavior: ReceiveFunc): void;
  unbecome(): void;
  /**
   * Waits for `promise` without blocking the mailbox; `callback` later runs as a turn of this
   * actor, with `ctx.message` and `ctx.sender` of the message that called reenterAfter.
   */
  reenterAfter<T>(
    promise: Promise<T>,
    callback: (value: T | undefined, error: unknown) => void | Promise<void>,
  ): void;
}

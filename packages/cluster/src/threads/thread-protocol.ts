/**
 * What crosses the thread boundary, both ways, by structured clone (worker_threads'
 * postMessage): a task carries the message and the call's identity and deadline; a result carries
 * the reply or the handler's error as plain fields (a cloned Error would lose its `code`).
 */

/** Handed to a worker thread: one call's message and what the handler may know about it. */
export interface ThreadTask {
  readonly message: unknown;
  readonly kind: string;
  readonly identity: string;
  readonly activationId: string;
  /** The call's deadline, epoch ms; null when it has none. */
  readonly deadline: number | null;
  /** No call: the pool posts it only to start a thread; the entry answers it at once. */
  readonly wake?: true;
}

/** Handed back: the reply, or the handler's error. */
export type ThreadResult =
  | { readonly ok: true; readonly value: unknown }
  | {
      readonly ok: false;
      readonly name: string;
      readonly code: string | undefined;
      readonly message: string;
      readonly stack: string | undefined;
      /** The handler returned something that cannot be cloned back. */
      readonly clone?: true;
    };

/** What the worker thread's module is told at start (piscina's workerData). */
export interface ThreadModuleSpec {
  /** Absolute path (or resolvable specifier) of the handler's module. */
  readonly module: string;
  /** The handler's export name. */
  readonly exportName: string;
}

/** What the handler gets besides the message (in its worker thread). */
export interface ThreadTaskContext {
  readonly kind: string;
  readonly identity: string;
  readonly activationId: string;
  /** The call's deadline, epoch ms (Infinity when the call has none). */
  readonly deadline: number;
  /** Ms left until the deadline (Infinity when none). */
  readonly remainingMs: number;
  /**
   * Aborts at the deadline, for handlers that await. A synchronous handler still running at the
   * deadline is stopped by terminating its thread.
   */
  readonly signal: AbortSignal;
}

/**
 * A handler run in a worker thread: its module exports it (as `handler` by default) and it gets
 * a structured-clone copy of the message; what it returns (or resolves with) is the reply.
 *
 * @example
 * // resize-task.ts, compiled to resize-task.js
 * export function handler(message: { image: Uint8Array }, ctx: ThreadTaskContext) {
 *   return resize(message.image); // runs off the member's event loop
 * }
 */
export type ThreadHandler = (message: unknown, ctx: ThreadTaskContext) => unknown;

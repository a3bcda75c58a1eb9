import type { ReceiveFunc, SenderContext } from './context';
import type { PID } from './pid';

/** A user message with its metadata, as sender middleware sees it. */
export interface MessageEnvelope {
  message: unknown;
  /** Who to reply to; a request's sender is its future process. */
  sender?: PID | undefined;
  /** String headers, carried across nodes. */
  header?: Record<string, string> | undefined;
  /** `'urgent'` uses the target's urgent lane, drained before ordinary user messages. */
  priority?: 'urgent' | undefined;
  /**
   * A request's deadline, epoch ms: the requester stops waiting then. Set from the request's
   * `timeoutMs` and carried across nodes (as the remaining time, so clocks need not agree), so
   * the target can see it as `ctx.deadline`.
   */
  deadline?: number | undefined;
}

/** Wraps an actor's receive: may act before and after `next(ctx)`, or not call it. */
export type ReceiveMiddleware = (next: ReceiveFunc) => ReceiveFunc;

/** Delivers an outgoing envelope to `target`. */
export type SenderFunc = (ctx: SenderContext, target: PID, envelope: MessageEnvelope) => void;

/** Wraps an actor's outgoing sends (send, request, respond, forward). */
export type SenderMiddleware = (next: SenderFunc) => SenderFunc;

/**
 * Folds middleware around `last` so they run in registration order: the first registered is
 * the outermost (as proto-actor's makeInboundMiddlewareChain).
 */
export function makeReceiveChain(
  middleware: readonly ReceiveMiddleware[],
  last: ReceiveFunc,
): ReceiveFunc | undefined {
  if (middleware.length === 0) return undefined;
  let h = last;
  for (let i = middleware.length - 1; i >= 0; i--) h = middleware[i]!(h);
  return h;
}

/** Same for sender middleware. */
export function makeSenderChain(
  middleware: readonly SenderMiddleware[],
  last: SenderFunc,
): SenderFunc | undefined {
  if (middleware.length === 0) return undefined;
  let h = last;
  for (let i = middleware.length - 1; i >= 0; i--) h = middleware[i]!(h);
  return h;
}

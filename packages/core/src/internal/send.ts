import type { SenderContext } from '../context';
import { FutureProcess, type ReplySink, type RequestOptions } from '../future-process';
import type { SenderFunc } from '../middleware';
import type { PID } from '../pid';
import type { Entry } from '../process';
import { withActiveTraceContext } from '../trace-context';
import { sendEntry } from './deliver';
import type { Runtime } from './runtime';

/**
 * Request semantics: a future as sender; errors reject the returned promise. A request made
 * while a span is active carries its W3C trace context in its headers (one context lookup
 * otherwise).
 */
export function requestEntry<T>(
  rt: Runtime,
  target: PID,
  message: unknown,
  options: RequestOptions | undefined,
  ctx: SenderContext,
  chain: SenderFunc | undefined,
): Promise<T> {
  const header = options?.header;
  const traced = withActiveTraceContext(header);
  if (traced !== header) options = { ...options, header: traced };
  const future = new FutureProcess<T>(rt, target, message, options);
  if (!future.dead) sendRequest(rt, target, future, ctx, chain);
  return future.promise!; // dead: aborted (or invalid) before it was sent
}

/** Request semantics with the outcome handed to `sink` instead of a promise. */
export function requestToSink(
  rt: Runtime,
  target: PID,
  message: unknown,
  options: RequestOptions | undefined,
  sink: ReplySink,
  ctx: SenderContext,
  chain: SenderFunc | undefined,
): void {
  const future = new FutureProcess(rt, target, message, options, sink);
  if (!future.dead) sendRequest(rt, target, future, ctx, chain);
}

function sendRequest<T>(
  rt: Runtime,
  target: PID,
  future: FutureProcess<T>,
  ctx: SenderContext,
  chain: SenderFunc | undefined,
): void {
  // The future is the request's envelope: its entry is itself.
  if (chain === undefined) return sendEntry(rt, target, future as unknown as Entry, false);
  const { message, header, deadline } = future;
  chain(ctx, target, { message, sender: future.pid, header, deadline });
}

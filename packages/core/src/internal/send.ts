import type { SenderContext } from '../context';
import { FutureProcess, type ReplySink, type RequestOptions } from '../future-process';
import type { SenderFunc } from '../middleware';
import type { PID } from '../pid';
import type { Entry } from '../process';
import { sendEntry } from './deliver';
import type { Runtime } from './runtime';

/** Request semantics: a future as sender; errors reject the returned promise. */
export function requestEntry<T>(
  rt: Runtime,
  target: PID,
  message: unknown,
  options: RequestOptions | undefined,
  ctx: SenderContext,
  chain: SenderFunc | undefined,
): Promise<T> {
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

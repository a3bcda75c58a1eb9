import { MailboxFullError } from '../errors';
import { FutureProcess, type ReplySink, type RequestOptions } from '../future-process';
import type { PID } from '../pid';
import type { SenderContext } from '../context';
import type { SenderFunc } from '../middleware';
import { laneEntry, type LocalProcess } from '../process';
import { Envelope } from './envelope';
import type { Runtime } from './runtime';

/** A lane entry: the bare message unless it carries a sender, headers or a deadline. */
export const entryOf = laneEntry;

/** Capacity of the last target that refused a message (read right after deliver returns false). */
let refusedCapacity = Infinity;

/**
 * The hot path of every send: a cached local process takes the entry directly (a few
 * property reads and one push); anything else goes through the registry (remote, dead
 * letters). Returns false only when a local bounded mailbox is full.
 */
export function deliver(rt: Runtime, target: PID, entry: unknown, urgent: boolean): boolean {
  let p: LocalProcess | undefined = target._p;
  if (p === undefined || p.dead || p.owner !== rt.registry) {
    const process = rt.registry.get(target);
    if ((process as LocalProcess).owner !== rt.registry) {
      if (process.sendEntry !== undefined) {
        process.sendEntry(target, entry, urgent);
        return true;
      }
      const e = entry instanceof Envelope ? entry : undefined;
      process.sendUserMessage(target, {
        message: e === undefined ? entry : e.message,
        sender: e?.sender,
        header: e?.header,
        priority: urgent ? 'urgent' : undefined,
        deadline: e?.deadline,
      });
      return true;
    }
    p = process as LocalProcess;
  }
  if (p.post(entry, urgent)) return true;
  refusedCapacity = p.capacity;
  return false;
}

/** Send semantics: a full mailbox dead-letters the message with reason `mailbox-full`. */
export function sendEntry(rt: Runtime, target: PID, entry: unknown, urgent: boolean): void {
  if (deliver(rt, target, entry, urgent)) return;
  const e = entry instanceof Envelope ? entry : undefined;
  const sender = e?.sender;
  const error = new MailboxFullError(target.toString(), refusedCapacity);
  // A request's future (as sender) is rejected with MailboxFullError by dead letters.
  rt.deadLetters.publish(
    target,
    e === undefined ? entry : e.message,
    sender,
    'mailbox-full',
    error,
  );
}

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
  if (chain === undefined) return sendEntry(rt, target, future, false); // the future is the envelope
  const { message, header, deadline } = future;
  chain(ctx, target, { message, sender: future.pid, header, deadline });
}

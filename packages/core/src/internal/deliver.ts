import type { DeadLetters } from '../dead-letters';
import { MailboxFullError } from '../errors';
import type { PID } from '../pid';
import type { Entry, LocalProcess, Process } from '../process';
import type { ProcessRegistry } from '../process-registry';
import { Envelope } from './envelope';

/** What delivery needs: an ActorSystem's runtime, or the remote's inbound state. */
export interface Delivery {
  readonly registry: ProcessRegistry;
  readonly deadLetters: DeadLetters;
}

/**
 * The one dispatch of a user message, for local sends and remote inbound delivery alike: a
 * cached local process takes the entry directly (a few property reads and one call); anything
 * else is looked up in the registry (which caches a local process, or another node's endpoint
 * process, on the PID for next time; the latter is taken at the second call site below).
 * Returns undefined when the entry was taken, else the process that refused it (a bounded
 * mailbox that is full).
 *
 * Two call sites of `post` on purpose: the cached one sees only local processes (actors,
 * futures, local routers), the other remote endpoints, prefix routes and dead letters, so
 * neither sees more than a few shapes (a megamorphic call would cost every send).
 */
export function deliver(
  registry: ProcessRegistry,
  target: PID,
  entry: Entry,
  urgent: boolean,
): Process | undefined {
  let p = target._p as LocalProcess | undefined;
  if (p === undefined || p.dead || p.owner !== registry) {
    const process = registry.get(target);
    if ((process as LocalProcess).owner !== registry) {
      return process.post(target, entry, urgent) ? undefined : process;
    }
    p = process as LocalProcess;
  }
  return p.post(target, entry, urgent) ? undefined : p;
}

/** Send semantics: a full mailbox dead-letters the message with reason `mailbox-full`. */
export function sendEntry(d: Delivery, target: PID, entry: Entry, urgent: boolean): void {
  const refused = deliver(d.registry, target, entry, urgent);
  if (refused !== undefined) deadLetterRefused(d, target, entry, refused);
}

/** A request's future (as sender) is rejected with MailboxFullError by dead letters. */
function deadLetterRefused(d: Delivery, target: PID, entry: Entry, refused: Process): void {
  const e = entry instanceof Envelope ? entry : undefined;
  const capacity = (refused as Partial<LocalProcess>).capacity ?? Infinity;
  const error = new MailboxFullError(target.toString(), capacity);
  const message = e === undefined ? entry : e.message;
  d.deadLetters.publish(target, message, e?.sender, 'mailbox-full', error);
}

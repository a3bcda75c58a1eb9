import { InvalidArgumentError, Props, type ActorSystem, type PID } from '@granary/core';
import { identityProblem } from '../../grains/grain-identity';
import { RemindersBusyError } from '../errors';
import type { GrainReminders, ReminderOptions } from '../reminder';

/**
 * Name of each member's actor that changes and reads reminders for programs that are not
 * members (`GranaryClient.reminders`). A client has no reminder store of its own: it asks a
 * member, which stores the change and tells the shard's owner, as `cluster.reminders` does.
 */
export const REMINDER_OPS_ACTOR = '$reminder-ops';

/**
 * Reminder operations a member runs at once for clients; beyond it a client's operation is
 * refused with RemindersBusyError (retried elsewhere). Each one is a store round trip, and a
 * client's frames can carry thousands: the bound keeps them from queueing without end.
 */
export const MAX_REMINDER_OPS_IN_FLIGHT = 256;

/** The operations of GrainReminders, as they travel. */
export type ReminderOpName = 'set' | 'delete' | 'list' | 'outcome';

const OPS: readonly ReminderOpName[] = ['set', 'delete', 'list', 'outcome'];

/** One reminder operation from a client (plain data: it crosses the wire as JSON). */
export interface ReminderOp {
  readonly $reminderOp: ReminderOpName;
  readonly kind: string;
  readonly id: string;
  /** The reminder's name (set, delete, outcome). */
  readonly name?: string;
  /** `set`'s options, as the caller gave them (the member computes the schedule). */
  readonly options?: ReminderOptions;
}

/** True for a message that claims to be a reminder operation (checked in full by runOp). */
export function isReminderOp(message: unknown): message is ReminderOp {
  return (
    message !== null &&
    typeof message === 'object' &&
    typeof (message as { $reminderOp?: unknown }).$reminderOp === 'string'
  );
}

/**
 * Runs `op` on the reminders of its grain. The operation came from outside this process: its
 * fields are checked here, and the options again by `set` (each error names the argument).
 */
export function runOp(
  op: ReminderOp,
  reminders: (kind: string, id: string) => GrainReminders,
): Promise<unknown> {
  if (!OPS.includes(op.$reminderOp)) {
    throw new InvalidArgumentError('op', `unknown reminder operation ${String(op.$reminderOp)}`);
  }
  const kindProblem = identityProblem(op.kind);
  if (kindProblem !== undefined) throw new InvalidArgumentError('kind', kindProblem);
  const r = reminders(op.kind, op.id);
  switch (op.$reminderOp) {
    case 'set':
      return r.set(op.name!, op.options!);
    case 'delete':
      return r.delete(op.name!);
    case 'list':
      return r.list();
    case 'outcome':
      // undefined is no reply at all: the client reads null as "no outcome yet".
      return r.outcome(op.name!).then((o) => o ?? null);
  }
}

/**
 * Spawns the member's `$reminder-ops` actor. Any peer that passed the member's handshake (a
 * member or a GranaryClient holding the cluster's secret or certificate) may ask, as it may
 * call grains. Operations run concurrently, at most MAX_REMINDER_OPS_IN_FLIGHT; each is answered
 * with its result or its error.
 */
export function spawnReminderOpsActor(
  system: ActorSystem,
  memberId: string,
  reminders: (kind: string, id: string) => GrainReminders,
): PID {
  let inFlight = 0;
  return system.root.spawnNamed(
    Props.fromFunc((ctx) => {
      const m = ctx.message;
      const sender = ctx.sender;
      // Without a sender there is nobody to answer: running it would be work for no one.
      if (!isReminderOp(m) || sender === undefined) return;
      if (inFlight >= MAX_REMINDER_OPS_IN_FLIGHT) {
        ctx.respond(new RemindersBusyError(memberId, MAX_REMINDER_OPS_IN_FLIGHT));
        return;
      }
      inFlight++;
      let result: Promise<unknown>;
      try {
        result = runOp(m, reminders);
      } catch (err) {
        result = Promise.reject(err as Error);
      }
      // Answered from outside the turn: the actor takes the next operation meanwhile.
      void result
        .then(
          (value) => system.root.send(sender, value ?? null),
          (err: unknown) =>
            system.root.send(sender, err instanceof Error ? err : new Error(String(err))),
        )
        .finally(() => inFlight--);
    }),
    REMINDER_OPS_ACTOR,
  );
}

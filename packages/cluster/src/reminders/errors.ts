import { registerErrorClasses } from '@granary/core';
import { ClusterError } from '../errors';

/**
 * Errors of reminders and jobs. Bad arguments of `reminders.set` are core's
 * InvalidArgumentError; `ReminderError.is(err)` matches every class below.
 */

/** Base of the reminder errors, and the error for an unexpected reply of the store. */
export class ReminderError extends ClusterError {
  static override readonly code: string = 'ERR_REMINDER';
  override readonly name: string = 'ReminderError';
}

/**
 * A write for a shard carried an epoch older than one the store has seen for it: the writer no
 * longer owns the shard, so it must not fire the shard's reminders. Nothing was written.
 */
export class ReminderFencedError extends ReminderError {
  static override readonly code = 'ERR_REMINDER_FENCED';
  override readonly name = 'ReminderFencedError';
  constructor(
    readonly kind: string,
    readonly shard: number,
    readonly epoch: number,
    readonly storedEpoch: number,
  ) {
    super(
      `reminders of ${kind} shard ${shard}: epoch ${epoch} is older than the stored ${storedEpoch} (the shard is owned elsewhere)`,
    );
  }
}

/**
 * The reminder store did not answer in time (Redis down or silent); the outcome of a write is
 * unknown. The owner retries loads and claims by itself.
 */
export class ReminderStoreUnavailableError extends ReminderError {
  static override readonly code = 'ERR_REMINDER_STORE_UNAVAILABLE';
  override readonly name = 'ReminderStoreUnavailableError';
}

/**
 * What the store holds for a reminder is not what it writes (another program wrote under the
 * store's keys, or the value was damaged): a schedule that is not `<gen> <t0> <json spec>` with
 * a well-formed spec, a last tick that is not an integer, a job outcome that is not JSON. That
 * reminder is not fired (its owner logs this error and loads the shard's other reminders);
 * `list()` and `outcome()` of its grain throw it. `set` replaces it, `delete` removes it.
 */
export class ReminderCorruptError extends ReminderError {
  static override readonly code = 'ERR_REMINDER_CORRUPT';
  override readonly name = 'ReminderCorruptError';
  constructor(
    readonly kind: string,
    readonly shard: number,
    /** The reminder's grain identity and name, as far as the field could be read. */
    readonly id: string,
    readonly reminder: string,
    /** The store's key that holds it. */
    readonly key: string,
    detail: string,
  ) {
    super(
      `stored reminder '${reminder}' of ${kind}/${id} is corrupt (key ${key}): ${detail}; ` +
        'set it again or delete it',
    );
  }
}

/** `reminders` was used on a member started without `reminders: { store }`. */
export class RemindersNotConfiguredError extends ReminderError {
  static override readonly code = 'ERR_REMINDERS_NOT_CONFIGURED';
  override readonly name = 'RemindersNotConfiguredError';
  constructor() {
    super(
      'reminders need a store: start the cluster with reminders: { store } (ClusterOptions.reminders)',
    );
  }
}

/**
 * A member refused a client's reminder operation: it runs `limit` of them already. Nothing of
 * the operation ran; `GranaryClient.reminders` tries it again (another member first) within its
 * deadline.
 */
export class RemindersBusyError extends ReminderError {
  static override readonly code = 'ERR_REMINDERS_BUSY';
  override readonly name = 'RemindersBusyError';
  constructor(
    readonly member: string,
    readonly limit: number,
  ) {
    super(`member ${member} runs ${limit} reminder operations of clients already; retry later`);
  }
}

registerErrorClasses(
  ReminderError,
  RemindersBusyError,
  ReminderFencedError,
  ReminderStoreUnavailableError,
  ReminderCorruptError,
  RemindersNotConfiguredError,
);

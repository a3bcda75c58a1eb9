import { StateDurabilityError } from '../../state/errors';
import { DurabilityShortfall } from '../../state/redis/durable-ack';
import { ReminderError, ReminderStoreUnavailableError } from '../errors';

/** Redis replies that say "not now" (the call may succeed later), not "never". */
const TRANSIENT = /^(LOADING|BUSY|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|READONLY|NOREPLICAS)/;

/**
 * A failed Redis call's error as RedisReminderStore reports it: its own errors as they are, a
 * durability shortfall or an outage as ReminderStoreUnavailableError (the owner retries), any
 * other Redis reply as ReminderError.
 */
export function mappedStoreError(err: unknown, timeoutMs: number): Error {
  if (StateDurabilityError.is(err) || ReminderError.is(err)) return err as Error;
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof DurabilityShortfall) {
    return new ReminderStoreUnavailableError(
      `reminder store: ${message}; the write's outcome is unknown`,
      { cause: err },
    );
  }
  if (err instanceof Error && err.name === 'ReplyError') {
    if (!TRANSIENT.test(message)) {
      return new ReminderError(`reminder store: Redis replied ${message}`, { cause: err });
    }
    // Came at once (READONLY from a demoted primary, LOADING): no timeout was involved.
    return new ReminderStoreUnavailableError(
      `reminder store: Redis replied ${message} (not now; try again)`,
      { cause: err },
    );
  }
  return new ReminderStoreUnavailableError(
    `reminder store: Redis unavailable within ${timeoutMs} ms (commandTimeoutMs): ${message}`,
    { cause: err },
  );
}

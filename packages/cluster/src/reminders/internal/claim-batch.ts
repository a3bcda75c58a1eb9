import type { ClaimResult, ReminderStore, TickClaim } from '../reminder-store';
import type { ShardReminders } from './shard-loads';

/** Most claims in one store call (bounds the script's argument count). */
const MAX_CLAIM_BATCH = 512;

/**
 * Claims `claim` in `s`'s next store call: every reminder of a shard due in the same turn (one
 * wheel tick) joins one call, made at the end of the turn under the shard's epoch. `up` runs
 * when the store answered (it is reachable again).
 */
export function queueClaim(
  store: ReminderStore,
  s: ShardReminders,
  claim: TickClaim,
  up: () => void,
): Promise<ClaimResult> {
  return new Promise((resolve, reject) => {
    s.batch.push({ claim, resolve, reject });
    if (s.batch.length === 1) queueMicrotask(() => flush(store, s, up));
  });
}

function flush(store: ReminderStore, s: ShardReminders, up: () => void): void {
  while (s.batch.length > 0) {
    const batch = s.batch.splice(0, MAX_CLAIM_BATCH);
    store
      .claim(
        s.kind,
        s.shard,
        s.epoch,
        batch.map((b) => b.claim),
      )
      .then(
        (results) => {
          up();
          batch.forEach((b, i) => b.resolve(results[i]!));
        },
        (err: Error) => batch.forEach((b) => b.reject(err)),
      );
  }
}

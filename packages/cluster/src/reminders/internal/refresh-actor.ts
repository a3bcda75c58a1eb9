import { LogThrottle, Props, type ActorSystem, type PID } from '@granary/core';
import { peerAddressOf } from '@granary/core/internal';
import type { ClusterLogger } from '../../internal/logger';

/** Name of each member's reminder actor (owners are told of changes made elsewhere). */
export const REMINDERS_ACTOR = '$reminders';
/** Refused refreshes are logged once per this, then as a count (a peer may send thousands). */
const REFUSED_LOG_INTERVAL_MS = 10_000;

/** A change to a reminder, told to its shard's owner. */
export interface RefreshMessage {
  $remindersRefresh: true;
  kind: string;
  shard: number;
  id: string;
  name: string;
}

/**
 * Spawns a member's `$reminders` actor: it reads a changed reminder again for its shard's
 * owner. Each request is a store read, so only members ask: the address the sender's link
 * authenticated must be a member's (a PID made in this process has none), and a request needs
 * a sender. Otherwise any peer holding the secret (a GranaryClient) turned each message of its
 * frames into a read of the cluster's reminder store. A refused one is answered `false`.
 */
export function spawnRefreshActor(
  system: ActorSystem,
  isMember: (address: string) => boolean,
  refresh: (m: RefreshMessage) => Promise<boolean>,
  logger: ClusterLogger,
): PID {
  const refused = new LogThrottle(logger, REFUSED_LOG_INTERVAL_MS);
  return system.root.spawnNamed(
    Props.fromFunc((ctx) => {
      const m = ctx.message as RefreshMessage | undefined;
      if (m?.$remindersRefresh !== true) return;
      const sender = ctx.sender;
      const from = sender && peerAddressOf(sender);
      if (sender === undefined || (from !== undefined && !isMember(from))) {
        refused.log(
          'refused',
          'warn',
          { from: from ?? 'no sender' },
          'reminder refresh refused: not from a member',
        );
        if (sender !== undefined) ctx.respond(false);
        return;
      }
      return refresh(m).then(
        (ok) => ctx.respond(ok),
        () => ctx.respond(false),
      );
    }),
    REMINDERS_ACTOR,
  );
}

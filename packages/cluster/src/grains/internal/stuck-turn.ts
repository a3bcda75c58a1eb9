import type { PID } from '@granary/core';
import { entryMessage, entryOf, entrySender, Mailbox, type Entry } from '@granary/core/internal';
import type { Activation } from '../activation';
import { Deactivate } from '../activation-host';
import type { DeactivationReason } from '../grain';
import type { KindDefinition } from '../kind';
import type { GrainServices } from './grain-services';

/** What handling a stuck turn needs of the kind's host (the Activator). */
export interface StuckTurnHost {
  readonly def: KindDefinition;
  readonly services: GrainServices;
  /** Turns found stuck past turnTimeoutMs. */
  timedOutTurns: number;
  /** Messages posted to activations and not finished. */
  queued: number;
  requestDeactivate(a: Activation, reason: DeactivationReason): void;
  /** Answers `to` with TurnTimeoutError. */
  stuckReply(a: Activation, to: PID | undefined): void;
}

/**
 * A blocking turn ran past turnTimeoutMs: the calls queued behind it fail now, and so will
 * those that arrive while it runs (deliver); the activation deactivates when the turn ends and
 * stays in the table until then, so no second activation of the identity can start.
 */
export function turnStuck(host: StuckTurnHost, a: Activation, ms: number): void {
  if (a.stuckMs !== undefined) return;
  a.stuckMs = ms;
  host.timedOutTurns++;
  host.services.logger.warn(
    {
      grain: `${host.def.name}/${a.identity}`,
      activationId: a.id,
      runningMs: Math.round(ms),
      turnTimeoutMs: host.def.turnTimeoutMs,
    },
    'grain turn stuck past turnTimeoutMs: its queued calls fail; it deactivates when the turn ends',
  );
  const proc = a.proc;
  let deactivate: Deactivate | undefined;
  // A local actor is its mailbox (core's ActorCell extends Mailbox): take its queue as it is.
  if (proc instanceof Mailbox) {
    for (const entry of proc.drainUser() as Entry[]) {
      const m = entryMessage(entry);
      if (m instanceof Deactivate) {
        deactivate = m;
        continue;
      }
      a.inflight--;
      host.queued--;
      host.services.load.pending--;
      host.stuckReply(a, entrySender(entry));
    }
  }
  if (deactivate !== undefined) proc.post(proc.self, entryOf(deactivate), false);
  else if (a.state === 'active') host.requestDeactivate(a, 'turn-timeout');
  else {
    const deferred = a.deferredDeactivate;
    if (deferred !== undefined && proc.post(proc.self, entryOf(new Deactivate(deferred)), false)) {
      a.deferDeactivate(undefined);
    }
  }
}

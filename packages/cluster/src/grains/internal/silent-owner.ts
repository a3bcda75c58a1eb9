import { EndpointUnavailableError } from '@granary/core';
import type { PeerSilence } from '@granary/core/internal';
import type { Setback } from './call-outcome';

/**
 * The setback of a call held back from `address` because its link's peer has credited nothing
 * for linkProbeMs or longer (core's PeerSilence: the member is paused, its loop is blocked, or
 * the path to it is cut), or undefined when the owner reads. Sent there, the call would wait
 * for its deadline unanswered even after the owner's shards move to a survivor; held, it is
 * retried (never sent, so safely) with the loop's backoff: on the shard's new owner once the
 * topology names one, or on this owner once it reads again. At the deadline it fails with
 * DeadlineExceededError caused by this EndpointUnavailableError. (`since` is core's Date.now():
 * the wait in the message is read on that clock.)
 */
export function silentOwner(
  address: string,
  silence: PeerSilence | undefined,
): Setback | undefined {
  if (silence === undefined || silence.since === 0) return undefined;
  const error = new EndpointUnavailableError(
    address,
    `${address} has read nothing written to it for ${Math.max(0, Date.now() - silence.since)} ms ` +
      `(paused, blocked or cut off): the call was held here, not sent`,
  );
  return { kind: 'retry', error, hint: undefined, held: true };
}

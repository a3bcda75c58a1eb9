import type { SilenceWatcher } from './link-writer';

/**
 * Whether the peer at one address has stopped reading what this node wrote to it: one object
 * per address, written by the link to that peer and read per call by whoever decides where to
 * send (the cluster's grain caller holds a call rather than send it into a link whose peer
 * credits nothing: a paused or cut-off peer answers no call sent to it before its deadline,
 * while the call held back can still go to whichever member takes the peer's work over).
 *
 * Set when the link has had bytes uncredited for `linkProbeMs` (the moment the link starts
 * probing the path, see PathProbe) and then CONFIRM_MS more while this process ran on time;
 * cleared when the peer credits again and when the link ends (the endpoint then fails or
 * dials as before).
 */
export class PeerSilence {
  /** Date.now() of the peer's last credit before it fell silent; 0 while it is not silent. */
  since = 0;
}

/**
 * How long a silence report waits to be confirmed: the peer must credit nothing meanwhile, and
 * this process's own loop must have run on time. A report can come right after this process
 * was the one held (a long GC, a blocked turn): its timer fires before the credit waiting in
 * its socket is read, and a peer in the same process (in-process members) credits only once
 * both run again. Either way the peer is not silent, and its calls must not be held.
 */
const CONFIRM_MS = 100;

/**
 * What a link's writer reports silence to: `holder.silence` (the endpoint's PeerSilence, read
 * at each report: the endpoint sets it when it takes the link), once confirmed (CONFIRM_MS),
 * and the link's path probe at once. The writer reports again every linkProbeMs while the peer
 * stays silent, so a report that was not confirmed is tried again.
 */
export function watchSilence(
  holder: { readonly silence: PeerSilence | undefined },
  probe: SilenceWatcher | undefined,
): SilenceWatcher {
  let credits = 0;
  let confirming = false;
  return {
    silent: (silentMs) => {
      probe?.silent(silentMs);
      const s = holder.silence;
      if (s === undefined || s.since !== 0 || confirming) return;
      confirming = true;
      const creditsBefore = credits;
      const at = Date.now();
      const timer = setTimeout(() => {
        confirming = false;
        const late = Date.now() - at - CONFIRM_MS;
        const current = holder.silence;
        if (credits !== creditsBefore || late > CONFIRM_MS || current === undefined) return;
        if (current.since === 0) current.since = at - silentMs;
      }, CONFIRM_MS);
      timer.unref();
    },
    heard: () => {
      credits++;
      const s = holder.silence;
      if (s !== undefined && s.since !== 0) s.since = 0;
      probe?.heard();
    },
  };
}

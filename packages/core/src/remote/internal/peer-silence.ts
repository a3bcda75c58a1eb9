import type { SilenceWatcher } from './link-writer';

/**
 * Whether the peer at one address has stopped reading what this node wrote to it: one object
 * per address, written by the link to that peer and read per call by whoever decides where to
 * send (the cluster's grain caller holds a call rather than send it into a link whose peer
 * credits nothing: a paused or cut-off peer answers no call sent to it before its deadline,
 * while the call held back can still go to whichever member takes the peer's work over).
 *
 * Set when the link has had bytes uncredited for `linkProbeMs` (the same moment the link
 * starts probing the path, see PathProbe); cleared when the peer credits again and when the
 * link ends (the endpoint then fails or dials as before).
 */
export class PeerSilence {
  /** Date.now() of the peer's last credit before it fell silent; 0 while it is not silent. */
  since = 0;
}

/**
 * What a link's writer reports silence to: `holder.silence` (the endpoint's PeerSilence, read
 * at each report: the endpoint sets it when it takes the link) and the link's path probe.
 */
export function watchSilence(
  holder: { readonly silence: PeerSilence | undefined },
  probe: SilenceWatcher | undefined,
): SilenceWatcher {
  return {
    silent: (silentMs) => {
      const s = holder.silence;
      if (s !== undefined && s.since === 0) s.since = Date.now() - silentMs;
      probe?.silent(silentMs);
    },
    heard: () => {
      const s = holder.silence;
      if (s !== undefined && s.since !== 0) s.since = 0;
      probe?.heard();
    },
  };
}

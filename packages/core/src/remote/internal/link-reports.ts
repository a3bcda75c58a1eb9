import { LinkLostError } from '../../errors';
import type { EventLog } from './event-log';
import type { LinkViolation, StreamLink } from './stream-link';

/** Counts and logs (throttled) a frame that could not be decoded; its stream is closed. */
export function reportCorruptFrame(events: EventLog, link: StreamLink, error: Error): void {
  events.report(
    'corruptFrames',
    'error',
    { peer: link.peerAddress || undefined, err: error.message },
    'corrupt remote frame; closing that stream',
  );
}

/**
 * Counts and logs (throttled) why a link was closed from this side: lost though not closed (a
 * healed partition), a peer not reading, or a peer over a limit.
 */
export function reportViolation(events: EventLog, link: StreamLink, error: LinkViolation): void {
  const peer = link.peerAddress || undefined;
  if (error instanceof LinkLostError) {
    return events.report(
      'linksLost',
      'warn',
      { peer, err: error.message },
      'remote link is dead though not closed (a healed partition); a new connection replaces it',
    );
  }
  const notReading = error.code === 'ERR_PEER_NOT_READING';
  events.report(
    notReading ? 'peersNotReading' : 'limitExceeded',
    'warn',
    { peer, limit: error.limit, err: error.message },
    notReading
      ? 'remote peer is not reading; its link is closed'
      : 'remote peer exceeded a limit; its link is closed',
  );
}

import type { Http2Session } from 'node:http2';
import * as net from 'node:net';

/**
 * What a TCP connect to a peer's address says about the path to it: `open` (the peer's kernel
 * answered), `refused` (its host answered, nothing listens), `unreachable` (no answer in time:
 * packets are dropped, as in a partition, or the host is gone).
 */
export type PathState = 'open' | 'refused' | 'unreachable';

/** A TCP connect to `address` (`host:port`, IPv6 in brackets), closed as soon as it settles. */
export function probePath(address: string, timeoutMs: number): Promise<PathState> {
  const colon = address.lastIndexOf(':');
  const host = address.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  const port = Number(address.slice(colon + 1));
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const settle = (state: PathState): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(state);
    };
    const timer = setTimeout(() => settle('unreachable'), timeoutMs);
    timer.unref();
    socket.once('connect', () => settle('open'));
    socket.once('error', (err: NodeJS.ErrnoException) =>
      settle(err.code === 'ECONNREFUSED' ? 'refused' : 'unreachable'),
    );
  });
}

/**
 * An HTTP/2 ping on the connection of a server call: true once answered, false when not within
 * `timeoutMs` (or the session failed). True when the session cannot be reached (grpc-js 1.14
 * keeps it at `call.call.stream.session`): without a ping the link is left alone.
 */
export function pingCall(call: object, timeoutMs: number): Promise<boolean> {
  const session = (call as { call?: { stream?: { session?: Http2Session } } }).call?.stream
    ?.session;
  if (session === undefined || session.destroyed || typeof session.ping !== 'function') {
    return Promise.resolve(true);
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    timer.unref();
    const done = (answered: boolean): void => {
      clearTimeout(timer);
      resolve(answered);
    };
    try {
      // false: too many pings unanswered already; the link's own checks go on.
      if (!session.ping((err) => done(err === null))) done(true);
    } catch {
      done(true);
    }
  });
}

/**
 * Tells a link whose peer went silent apart from one whose path died and came back.
 *
 * A partition drops packets both ways without closing anything; TCP retransmits with an
 * exponential backoff (0.2 s, 0.4 s, ... 12.8 s), so once the path heals an old connection
 * carries nothing until its next retransmission, which can be many seconds away, while a new
 * connection works at once. The link cannot see the kernel's retransmissions, but it sees that
 * the peer credits nothing it wrote (`silent`), and then a plain TCP connect to the peer's
 * address tells whether packets pass. The peer's kernel answers a connect even while the peer's
 * event loop is stalled (a long turn, GC, SIGSTOP), so a slow peer is never mistaken for a lost
 * path: only a connect that got no answer, followed by one that got an answer while the link
 * is still silent, means "replace the connection" (`recovered`).
 */
export class PathProbe {
  /** A connect during this silence got no answer. */
  private lost = false;
  private probing = false;
  private stopped = false;

  constructor(
    private readonly address: () => string,
    private readonly timeoutMs: number,
    /** The path was lost and works again, and the link is still silent. */
    private readonly recovered: (silentMs: number) => void,
    private readonly probe: typeof probePath = probePath,
  ) {}

  /** The peer has credited nothing for `silentMs`: probe once (unless one is under way). */
  silent(silentMs: number): void {
    const address = this.address();
    if (this.probing || this.stopped || address === '') return;
    this.probing = true;
    void this.probe(address, this.timeoutMs).then((state) => {
      this.probing = false;
      if (this.stopped) return;
      if (state === 'unreachable') this.lost = true;
      else if (this.lost) {
        this.stopped = true;
        this.recovered(silentMs);
      }
    });
  }

  /** The peer credited again: the silence, and what the probes learnt during it, are over. */
  heard(): void {
    this.lost = false;
  }

  /** The link closed. */
  stop(): void {
    this.stopped = true;
  }
}

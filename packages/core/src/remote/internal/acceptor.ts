import type { PeerCertificate } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import type { ConnectionGuard } from './connection-guard';
import type { EventLog } from './event-log';
import { serverFastPath } from './grpc-fast-path';
import {
  LINK_WINDOW_BYTES,
  refuseCompression,
  resetCall,
  setCallReceiveLimit,
  setCallWindow,
} from './grpc-options';
import { pingCall } from './path-probe';
import type { ResolvedRemoteOptions } from './resolve-options';
import type { HandshakeOutcome, ServerHandshakeHost } from './server-handshake';
import { ServerHandshake } from './server-handshake';
import type { LinkConfig, StreamLinkHandlers } from './stream-link';
import { StreamLink } from './stream-link';
import { encodeFrame } from './wire';

/** How long a peer whose link broke a limit has to take the status before its stream is reset. */
const RESET_AFTER_STATUS_MS = 1000;

/** What the accepting side needs from its node. */
export interface AcceptorHost extends ServerHandshakeHost {
  readonly config: ResolvedRemoteOptions;
  readonly events: EventLog;
  readonly linkConfig: LinkConfig;
  /** Frames after the handshake, and the link's troubles. */
  readonly linkHandlers: StreamLinkHandlers;
  readonly guard: ConnectionGuard | undefined;
  readonly closing: boolean;
  /** An authenticated peer dialled us: its link may serve as our way to it. */
  opened(link: StreamLink): void;
  /** An authenticated inbound link ended. */
  closed(link: StreamLink, error?: Error): void;
}

/**
 * The server side of a node's links: every stream a peer opens gets a ServerHandshake, a
 * handshake timer and the small pre-authentication frame limit; once authenticated it is
 * registered under the address and member id it stated (one live link each: `isHeld`) and
 * handed to the node.
 */
export class Acceptor {
  /** Every inbound link, authenticated or not. */
  readonly links = new Set<StreamLink>();
  /** Authenticated inbound links by the address and by the member id they state. */
  private readonly byAddress = new Map<string, StreamLink>();
  private readonly byMember = new Map<string, StreamLink>();
  /** Each inbound link's gRPC call (for a ping when its member dials again). */
  private readonly calls = new WeakMap<StreamLink, grpc.ServerDuplexStream<Buffer, Buffer>>();
  /** Held links being pinged because a handshake stated their address or member id. */
  private readonly contested = new WeakSet<StreamLink>();

  constructor(private readonly host: AcceptorHost) {}

  /**
   * True while another live authenticated inbound link states this address or member id (the
   * handshake is refused). Such a link is pinged (see `contest`): after a healed partition the
   * member dials again while its old link here is dead but not yet closed.
   */
  isHeld(address: string, memberId: string): boolean {
    const a = this.byAddress.get(address);
    const m = this.byMember.get(memberId);
    const held = [a, m].filter((l): l is StreamLink => l !== undefined && !l.isClosed);
    for (const link of held) this.contest(link);
    return held.length > 0;
  }

  /**
   * Pings a held link on its connection; one that does not answer within linkProbeMs is closed
   * (LinkLostError), so the member's next attempt (its reconnect backoff starts at 100 ms) gets
   * in. A live link answers (its peer's HTTP/2 layer does), and keeps its place: a second
   * handshake cannot take a live member's link away.
   */
  private contest(link: StreamLink): void {
    const timeoutMs = this.host.config.linkProbeMs;
    const call = this.calls.get(link);
    if (timeoutMs === 0 || call === undefined || this.contested.has(link)) return;
    this.contested.add(link);
    void pingCall(call, timeoutMs).then((answered) => {
      this.contested.delete(link);
      if (!answered && !link.isClosed) {
        link.lose(`its member dialled again and it answered no ping within ${timeoutMs} ms`);
      }
    });
  }

  accept(call: grpc.ServerDuplexStream<Buffer, Buffer>): void {
    const host = this.host;
    const peer = call.getPeer();
    // Closed with its connection (a peer starting stream after stream without authenticating).
    if (host.guard !== undefined && !host.guard.streamStarted(peer)) {
      call.on('error', () => undefined);
      return;
    }
    const limits = host.config.limits;
    const tooLarge = (limit: string) => (err: Error) => {
      host.events.report(
        'limitExceeded',
        'warn',
        { peer, limit, err: err.message },
        'remote peer exceeded a limit; its link is closed',
      );
      // Before authentication the connection is all the peer has: close it (once grpc-js has
      // sent the status), or HTTP/2 keeps taking the rest of the refused message.
      if (limit === 'limits.maxHandshakeBytes') {
        setImmediate(() => host.guard?.dropUnauthenticated(peer));
      }
    };
    // First, while grpc-js' decoder is between messages (it is replaced, see grpc-fast-path).
    const fastPaths = serverFastPath(call);
    // Before the handshake a peer may send only a small frame; grpc-js refuses a larger one
    // before buffering it.
    setCallReceiveLimit(call, limits.maxHandshakeBytes, tooLarge('limits.maxHandshakeBytes'));
    const handshake = new ServerHandshake(host, () => peerCertificateOf(call));
    let open = false;
    // Set below; a link refused before that (shutdown, compression) closes without one.
    let timer: NodeJS.Timeout | undefined = undefined;
    const link: StreamLink = new StreamLink(
      call,
      'server',
      '',
      {
        onFrame: (l, frame, receivedAt) => {
          if (open) return host.linkHandlers.onFrame(l, frame, receivedAt);
          const step = handshake.step(frame);
          if (step.reply) l.write(encodeFrame(step.reply));
          if (step.outcome.kind === 'pending') return;
          clearTimeout(timer);
          if (step.outcome.kind === 'refused') return this.refuse(l, step.outcome);
          open = true;
          setCallReceiveLimit(call, limits.maxFrameBytes, tooLarge('limits.maxFrameBytes'));
          setCallWindow(call, LINK_WINDOW_BYTES);
          this.opened(l, peer, step.outcome.address, step.outcome.memberId);
        },
        onClose: (l, error) => {
          clearTimeout(timer);
          this.links.delete(l);
          if (!open) return this.closeUnauthenticated(call, peer);
          host.guard?.linkClosed(peer);
          if (this.byAddress.get(l.peerAddress) === l) this.byAddress.delete(l.peerAddress);
          if (this.byMember.get(l.peerMemberId) === l) this.byMember.delete(l.peerMemberId);
          host.closed(l, error);
        },
        onCorruptFrame: (l, error) => host.linkHandlers.onCorruptFrame(l, error),
        onViolation: (l, error) => {
          host.linkHandlers.onViolation?.(l, error);
          // The status ends our half only: grpc-js goes on reading (and decoding) whatever
          // the peer keeps sending on its half. Reset the stream so HTTP/2 discards it. A peer
          // that does not read cannot get the status anyway (it queues behind unread data); any
          // other gets a moment to.
          const notReading = error.code === 'ERR_PEER_NOT_READING';
          setTimeout(() => resetCall(call), notReading ? 0 : RESET_AFTER_STATUS_MS).unref();
        },
      },
      host.linkConfig,
    );
    link.fastPaths = fastPaths;
    if (host.closing) return link.abort(grpc.status.UNAVAILABLE, 'node is shutting down');
    const encoding = refuseCompression(call);
    if (encoding !== undefined) return this.refuseEncoding(link, encoding);
    this.links.add(link);
    this.calls.set(link, call);
    const timeoutMs = host.config.handshakeTimeoutMs;
    timer = setTimeout(() => {
      host.events.report(
        'refusedHandshakes',
        'warn',
        { peer, refusal: 'timeout' },
        `remote peer completed no handshake within ${timeoutMs} ms (handshakeTimeoutMs); closing`,
      );
      link.abort(
        grpc.status.DEADLINE_EXCEEDED,
        `no handshake within ${timeoutMs} ms (handshakeTimeoutMs)`,
      );
    }, timeoutMs);
  }

  /**
   * A call whose messages say they are compressed (`grpc-encoding`): links never compress, so
   * it is no member's. Refused before any message is read (and closed as any stream that ends
   * unauthenticated, see `closeUnauthenticated`).
   */
  private refuseEncoding(link: StreamLink, encoding: string): void {
    const reason = `compressed messages are not accepted (grpc-encoding '${encoding.slice(0, 32)}')`;
    this.host.linkHandlers.onCorruptFrame(link, new Error(reason));
    link.abort(grpc.status.UNIMPLEMENTED, reason);
  }

  /**
   * A stream that ended before its peer authenticated (refused, timed out, corrupt, over a
   * limit): our status ends only our half, and grpc-js goes on reading and decoding whatever
   * the peer keeps sending on its own, while HTTP/2 keeps granting it window. A refused peer
   * pushed 1.7 GB in 8 s on 128 such streams and held its connections until
   * idleConnectionTimeoutMs. So the stream is reset and, unless an authenticated link shares
   * it, the connection closed, once the peer had a moment to read the status (a member dials
   * each attempt on a connection of its own).
   */
  private closeUnauthenticated(call: grpc.ServerDuplexStream<Buffer, Buffer>, peer: string): void {
    setTimeout(() => {
      resetCall(call);
      this.host.guard?.dropUnauthenticated(peer);
    }, RESET_AFTER_STATUS_MS).unref();
  }

  private refuse(link: StreamLink, outcome: Extract<HandshakeOutcome, { kind: 'refused' }>): void {
    this.host.events.report(
      'refusedHandshakes',
      'error',
      {
        peer: outcome.address,
        memberId: outcome.memberId,
        refusal: outcome.refusal,
        reason: outcome.reason,
      },
      'remote handshake refused',
    );
    link.abort(grpc.status.PERMISSION_DENIED, `handshake refused: ${outcome.reason}`);
  }

  private opened(link: StreamLink, peer: string, address: string, memberId: string): void {
    link.peerAddress = address;
    link.peerMemberId = memberId;
    link.authenticate();
    this.host.guard?.linkOpened(peer);
    this.byAddress.set(address, link);
    this.byMember.set(memberId, link);
    this.host.opened(link);
  }
}

/** The client certificate of a TLS connection, if it presented one that verified. */
function peerCertificateOf(
  call: grpc.ServerDuplexStream<Buffer, Buffer>,
): PeerCertificate | undefined {
  return call.getAuthContext()?.sslPeerCertificate;
}

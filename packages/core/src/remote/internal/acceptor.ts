import type { PeerCertificate } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import type { ConnectionGuard } from './connection-guard';
import type { EventLog } from './event-log';
import { setCallReceiveLimit } from './grpc-options';
import type { ResolvedRemoteOptions } from './resolve-options';
import type { HandshakeOutcome, ServerHandshakeHost } from './server-handshake';
import { ServerHandshake } from './server-handshake';
import type { LinkConfig, StreamLinkHandlers } from './stream-link';
import { StreamLink } from './stream-link';
import { encodeFrame } from './wire';

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

  constructor(private readonly host: AcceptorHost) {}

  /** True while another live authenticated inbound link states this address or member id. */
  isHeld(address: string, memberId: string): boolean {
    const a = this.byAddress.get(address);
    const m = this.byMember.get(memberId);
    return (a !== undefined && !a.isClosed) || (m !== undefined && !m.isClosed);
  }

  accept(call: grpc.ServerDuplexStream<Buffer, Buffer>): void {
    const host = this.host;
    const peer = call.getPeer();
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
    // Before the handshake a peer may send only a small frame; grpc-js refuses a larger one
    // before buffering it.
    setCallReceiveLimit(call, limits.maxHandshakeBytes, tooLarge('limits.maxHandshakeBytes'));
    const handshake = new ServerHandshake(host, () => peerCertificateOf(call));
    let open = false;
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
          this.opened(l, peer, step.outcome.address, step.outcome.memberId);
        },
        onClose: (l, error) => {
          clearTimeout(timer);
          this.links.delete(l);
          if (!open) return;
          host.guard?.linkClosed(peer);
          if (this.byAddress.get(l.peerAddress) === l) this.byAddress.delete(l.peerAddress);
          if (this.byMember.get(l.peerMemberId) === l) this.byMember.delete(l.peerMemberId);
          host.closed(l, error);
        },
        onCorruptFrame: (l, error) => host.linkHandlers.onCorruptFrame(l, error),
        onViolation: (l, error) => host.linkHandlers.onViolation?.(l, error),
      },
      host.linkConfig,
    );
    if (host.closing) return link.abort(grpc.status.UNAVAILABLE, 'node is shutting down');
    this.links.add(link);
    const timeoutMs = host.config.handshakeTimeoutMs;
    const timer = setTimeout(() => {
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

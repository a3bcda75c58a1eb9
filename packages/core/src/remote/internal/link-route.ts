import { EndpointUnavailableError } from '../../errors';
import type { LinkSender } from './link-sender';
import type { OutboundEnvelope } from './outbound-envelope';
import type { LinkListener } from './link-types';
import type { StreamLink } from './stream-link';

/** What a route needs from the node. */
export interface LinkRouteHost {
  senderOf(link: StreamLink): LinkSender;
  reject(address: string, env: OutboundEnvelope, error: Error): void;
}

/**
 * The way back over one inbound link. Senders of the messages a link delivers carry it
 * (`PID._via`): a reply to a sender address this node has no endpoint for, and that is not a
 * member, goes back over the link its request came on, and never makes this node dial an
 * address a peer named. Holds the link only while it is open.
 */
export class LinkRoute implements LinkListener {
  /** The remote's process that sends over this route (made on first use). */
  process: unknown = undefined;
  private link: StreamLink | undefined;

  constructor(
    link: StreamLink,
    private readonly host: LinkRouteHost,
  ) {
    this.link = link;
    this.peerAddress = link.peerAddress;
    link.listen(this);
  }

  writable(): void {}

  linkClosed(): void {
    this.detach();
  }

  /** The authenticated address of the peer at the other end. */
  readonly peerAddress: string;

  /** True once the link closed: sends are rejected. */
  get isDown(): boolean {
    return this.link === undefined || this.link.isClosed;
  }

  send(env: OutboundEnvelope): void {
    const link = this.link;
    if (link === undefined || link.isClosed) {
      return this.host.reject(
        this.peerAddress,
        env,
        new EndpointUnavailableError(
          this.peerAddress,
          `the link from ${this.peerAddress} that this reply would go back on is closed`,
        ),
      );
    }
    this.host.senderOf(link).send(env);
  }

  /** The link closed: let go of it. */
  detach(): void {
    this.link = undefined;
  }
}

/**
 * The authenticated address of the peer a PID came from: the address its link stated in an
 * authenticated handshake, for the sender of a message that arrived from another node;
 * undefined for a PID that did not come over a link (made here). What a sender's own `address`
 * field says is the peer's claim; this is what the link proved.
 */
export function peerAddressOf(pid: { _via?: object | undefined }): string | undefined {
  const via = pid._via;
  return via instanceof LinkRoute ? via.peerAddress : undefined;
}

/**
 * What the connection to a peer meets: an unreachable endpoint, a refused handshake, an
 * unauthenticated bind, a peer over a limit or not reading, a lost link, backpressure on large
 * messages. Re-exported by `errors.ts`.
 */
import { GranaryError, type ErrorData } from './granary-error';

/**
 * A remote endpoint cannot be reached: the connect attempt failed, the stream broke, the peer
 * refused the handshake, or the node is backing off before its next reconnect
 * (RemoteOptions.reconnect).
 */
export class EndpointUnavailableError extends GranaryError {
  static override readonly code = 'ERR_ENDPOINT_UNAVAILABLE';
  override readonly name = 'EndpointUnavailableError';
  /**
   * True when a request had already been handed to the connection that then broke: it may have
   * been delivered and handled. False: it was never sent, so sending it again is safe.
   */
  readonly inFlight: boolean;
  /** True when the peer said goodbye (an orderly shutdown) rather than vanishing. */
  readonly peerLeft: boolean;
  constructor(
    /** The unreachable node's `host:port`. */
    readonly address: string,
    message = `endpoint ${address} is unavailable`,
    options?: { cause?: unknown; inFlight?: boolean; peerLeft?: boolean },
  ) {
    super(message, options);
    this.inFlight = options?.inFlight ?? false;
    this.peerLeft = options?.peerLeft ?? false;
  }

  /** `inFlight` and `peerLeft` describe this process's link, so they do not travel. */
  override toJSON(): ErrorData {
    const out = super.toJSON();
    if (out.data) {
      delete out.data.inFlight;
      delete out.data.peerLeft;
    }
    return out;
  }
}

/**
 * What a remote handshake refused: `protocol-version`, `cluster-name`, `malformed` (a frame
 * that is not the next handshake step, or over the handshake size limit), `authentication`
 * (the shared secret was not proven), `certificate` (the TLS certificate does not cover the
 * stated address or member id), `duplicate` (another live link states that address or member
 * id), `shutdown` (the node is stopping), `timeout`.
 */
export type HandshakeRefusal =
  | 'protocol-version'
  | 'cluster-name'
  | 'malformed'
  | 'authentication'
  | 'certificate'
  | 'duplicate'
  | 'shutdown'
  | 'timeout';

/**
 * A remote handshake was refused: protocol version, cluster name, secret or certificate do
 * not match, or the stated identity is held by another live link (`refusal` says which).
 */
export class HandshakeError extends GranaryError {
  static override readonly code = 'ERR_HANDSHAKE';
  override readonly name = 'HandshakeError';
  /** What was refused; `duplicate`, `shutdown` and `timeout` may pass on a later attempt. */
  readonly refusal: HandshakeRefusal;
  constructor(message: string, options?: { cause?: unknown; refusal?: HandshakeRefusal }) {
    super(message, options);
    this.refusal = options?.refusal ?? 'malformed';
  }

  /** True when a later attempt may be accepted (the refusal is not about configuration). */
  get retryable(): boolean {
    return (
      this.refusal === 'duplicate' || this.refusal === 'shutdown' || this.refusal === 'timeout'
    );
  }
}

/**
 * The remote was asked to listen beyond loopback with no way to authenticate peers: anyone who
 * can reach the port could join. Set `secret`, or `tls` with `requireClientCert`, or accept the
 * risk with `insecure: true`.
 */
export class InsecureRemoteError extends GranaryError {
  static override readonly code = 'ERR_INSECURE_REMOTE';
  override readonly name = 'InsecureRemoteError';
  constructor(
    /** The interface that was to be bound. */
    readonly host: string,
  ) {
    super(
      `refusing to listen on ${host} without authentication: set secret (a shared secret of at ` +
        'least 16 bytes) or tls ({ ca, cert, key, requireClientCert: true }); set insecure: true ' +
        'only if every peer that can reach this port may join',
    );
  }
}

/**
 * A peer sent more than a limit allows (a frame, a string, a header, a message, a connection):
 * its link is closed with this as the reason. Also what a sender gets for one message a peer's
 * limits would refuse (an id, a type name or a header too long), refused before it is sent so
 * the link and the other calls on it are untouched. `limit` names the option.
 */
export class RemoteLimitError extends GranaryError {
  static override readonly code = 'ERR_REMOTE_LIMIT';
  override readonly name = 'RemoteLimitError';
  constructor(
    /** The option that bounds it, e.g. `limits.maxFrameBytes`. */
    readonly limit: string,
    detail: string,
  ) {
    super(`${detail} (${limit})`);
  }
}

/**
 * A peer stopped reading what this node writes to it: more than `maxOutboundBytes` went
 * uncredited, or none was credited for `writeStallTimeoutMs`. Its link was closed.
 */
export class PeerNotReadingError extends GranaryError {
  static override readonly code = 'ERR_PEER_NOT_READING';
  override readonly name = 'PeerNotReadingError';
  constructor(
    /** The peer's `host:port`. */
    readonly address: string,
    /** `maxOutboundBytes` or `writeStallTimeoutMs`. */
    readonly limit: 'maxOutboundBytes' | 'writeStallTimeoutMs',
    detail: string,
  ) {
    super(`${address} is not reading: ${detail} (${limit})`);
  }
}

/**
 * A link's connection is dead though neither side closed it (a partition that healed: TCP
 * resumes such a connection only at its next, backed-off retransmission, many seconds later).
 * Found by `linkProbeMs`: the peer credited nothing for a while, a TCP connect to its address
 * got no answer and a later one did; or the same member dialled again and the old link did not
 * answer an HTTP/2 ping. The link is closed and a new connection takes its place; requests
 * waiting on the old one fail with EndpointUnavailableError caused by this.
 */
export class LinkLostError extends GranaryError {
  static override readonly code = 'ERR_LINK_LOST';
  override readonly name = 'LinkLostError';
  constructor(
    /** The peer's `host:port`. */
    readonly address: string,
    detail: string,
  ) {
    super(`the connection to ${address} is lost: ${detail}; a new one replaces it (linkProbeMs)`);
  }
}

/**
 * A large message could not be queued for its link in time: `maxLargeBytesInFlight` of large
 * messages were ahead of it until its deadline, or as many bytes were already waiting.
 */
export class RemoteBackpressureError extends GranaryError {
  static override readonly code = 'ERR_REMOTE_BACKPRESSURE';
  override readonly name = 'RemoteBackpressureError';
  constructor(
    /** The peer's `host:port`. */
    readonly address: string,
    detail: string,
  ) {
    super(`large message to ${address} not sent: ${detail} (maxLargeBytesInFlight)`);
  }
}

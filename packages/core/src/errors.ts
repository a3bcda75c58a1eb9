/**
 * Base of every error Granary throws or rejects with: a fixed `name`, a stable `code` string
 * callers can switch on, and the `cause` where there is one.
 */
export class GranaryError extends Error {
  override readonly name: string = 'GranaryError';
  /** Stable machine-readable code, e.g. `ERR_TIMEOUT`. */
  readonly code: string;

  constructor(message: string, code: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** A request got no reply within its `timeoutMs`. */
export class TimeoutError extends GranaryError {
  override readonly name = 'TimeoutError';
  constructor(
    /** The target of the request, as `address/id`. */
    readonly target: string,
    /** The timeout that elapsed. */
    readonly timeoutMs: number,
  ) {
    super(`request to ${target} timed out after ${timeoutMs} ms (timeoutMs)`, 'ERR_TIMEOUT');
  }
}

/** The bounded user lane of the target was full; the message was not enqueued. */
export class MailboxFullError extends GranaryError {
  override readonly name = 'MailboxFullError';
  constructor(
    readonly target: string,
    /** The capacity of the full lane. */
    readonly capacity: number,
  ) {
    super(
      `mailbox of ${target} is full (${capacity} messages, mailbox.capacity)`,
      'ERR_MAILBOX_FULL',
    );
  }
}

/** The message could not be delivered (no such actor, or it stopped); it went to dead letters. */
export class DeadLetterError extends GranaryError {
  override readonly name = 'DeadLetterError';
  constructor(
    readonly target: string,
    /** Why it was dead-lettered, e.g. `not-found`, `stopped`. */
    readonly reason: string,
  ) {
    super(`message to ${target} went to dead letters (${reason})`, 'ERR_DEAD_LETTER');
  }
}

/** `spawnNamed` was given a name that a live actor already has. */
export class NameExistsError extends GranaryError {
  override readonly name = 'NameExistsError';
  constructor(readonly id: string) {
    super(`an actor with id "${id}" already exists (spawnNamed name)`, 'ERR_NAME_EXISTS');
  }
}

/** A request was cancelled through its `signal`. */
export class AbortError extends GranaryError {
  override readonly name = 'AbortError';
  constructor(
    readonly target: string,
    cause?: unknown,
  ) {
    super(`request to ${target} was aborted (signal)`, 'ERR_ABORTED', { cause });
  }
}

/** An option or argument is out of range; the message names the option. */
export class InvalidOptionError extends GranaryError {
  override readonly name = 'InvalidOptionError';
  constructor(
    /** The option, e.g. `mailbox.capacity`. */
    readonly option: string,
    detail: string,
  ) {
    super(`invalid ${option}: ${detail}`, 'ERR_INVALID_OPTION');
  }
}

/** The actor system was shut down: no more spawns, and pending requests are rejected. */
export class SystemShutdownError extends GranaryError {
  override readonly name = 'SystemShutdownError';
  constructor(readonly system: string) {
    super(`actor system "${system}" is shut down (shutdown)`, 'ERR_SHUTDOWN');
  }
}

/**
 * A remote endpoint cannot be reached: the connect attempt failed, the stream broke, the peer
 * refused the handshake, or the node is backing off before its next reconnect
 * (RemoteOptions.reconnect).
 */
export class EndpointUnavailableError extends GranaryError {
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
    super(message, 'ERR_ENDPOINT_UNAVAILABLE', options);
    this.inFlight = options?.inFlight ?? false;
    this.peerLeft = options?.peerLeft ?? false;
  }
}

/** A serialized message is larger than the remote's limit (RemoteOptions.maxMessageBytes). */
export class MessageTooLargeError extends GranaryError {
  override readonly name = 'MessageTooLargeError';
  constructor(
    readonly typeName: string,
    /** Serialized size in bytes. */
    readonly size: number,
    /** The limit in force. */
    readonly limit: number,
  ) {
    super(
      `message of type '${typeName}' is ${size} bytes, over the limit of ${limit} bytes (maxMessageBytes)`,
      'ERR_MESSAGE_TOO_LARGE',
    );
  }
}

/** A message type name has no codec in this process's serialization registry. */
export class UnknownTypeError extends GranaryError {
  override readonly name = 'UnknownTypeError';
  constructor(
    readonly typeName: string,
    message = `unknown message type '${typeName}' (serialization.registerRoot)`,
  ) {
    super(message, 'ERR_UNKNOWN_TYPE');
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
  override readonly name = 'HandshakeError';
  /** What was refused; `duplicate`, `shutdown` and `timeout` may pass on a later attempt. */
  readonly refusal: HandshakeRefusal;
  constructor(message: string, options?: { cause?: unknown; refusal?: HandshakeRefusal }) {
    super(message, 'ERR_HANDSHAKE', options);
    this.refusal = options?.refusal ?? 'malformed';
  }

  /** True when a later attempt may be accepted (the refusal is not about configuration). */
  get retryable(): boolean {
    return (
      this.refusal === 'duplicate' || this.refusal === 'shutdown' || this.refusal === 'timeout'
    );
  }
}

/** Remote spawn of a kind the target node never registered (remote.registerKind). */
export class UnknownKindError extends GranaryError {
  override readonly name = 'UnknownKindError';
  constructor(
    readonly kind: string,
    message = `unknown kind '${kind}': register it on the target node with remote.registerKind()`,
  ) {
    super(message, 'ERR_UNKNOWN_KIND');
  }
}

/**
 * An error that crossed the wire: `name`, `code` and `message` are the original error's, so a
 * caller can branch on them as if the error had been thrown locally.
 */
export class RemoteError extends GranaryError {
  override readonly name: string;
  constructor(name: string, code: string, message: string) {
    super(message, code);
    this.name = name;
  }
}

/**
 * The remote was asked to listen beyond loopback with no way to authenticate peers: anyone who
 * can reach the port could join. Set `secret`, or `tls` with `requireClientCert`, or accept the
 * risk with `insecure: true`.
 */
export class InsecureRemoteError extends GranaryError {
  override readonly name = 'InsecureRemoteError';
  constructor(
    /** The interface that was to be bound. */
    readonly host: string,
  ) {
    super(
      `refusing to listen on ${host} without authentication: set secret (a shared secret of at ` +
        'least 16 bytes) or tls ({ ca, cert, key, requireClientCert: true }); set insecure: true ' +
        'only if every peer that can reach this port may join',
      'ERR_INSECURE_REMOTE',
    );
  }
}

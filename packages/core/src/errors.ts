import { GranaryError, RemoteError, type ErrorClass, type ErrorData } from './granary-error';

export {
  GranaryError,
  RemoteError,
  errorData,
  errorFromData,
  hasCode,
  type ErrorClass,
  type ErrorData,
} from './granary-error';

/** A request got no reply within its `timeoutMs`. */
export class TimeoutError extends GranaryError {
  static override readonly code = 'ERR_TIMEOUT';
  override readonly name = 'TimeoutError';
  constructor(
    /** The target of the request, as `address/id`. */
    readonly target: string,
    /** The timeout that elapsed. */
    readonly timeoutMs: number,
  ) {
    super(`request to ${target} timed out after ${timeoutMs} ms (timeoutMs)`);
  }

  /**
   * Without a stack, as a request's timer makes it: its stack would only show the timer wheel,
   * and under overload it is made once per timed-out request, where a capture costs more than
   * the rest of the timeout's handling.
   */
  static of(target: string, timeoutMs: number): TimeoutError {
    const saved = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      return new TimeoutError(target, timeoutMs);
    } finally {
      Error.stackTraceLimit = saved;
    }
  }
}

/** The bounded user lane of the target was full; the message was not enqueued. */
export class MailboxFullError extends GranaryError {
  static override readonly code = 'ERR_MAILBOX_FULL';
  override readonly name = 'MailboxFullError';
  constructor(
    readonly target: string,
    /** The capacity of the full lane. */
    readonly capacity: number,
  ) {
    super(`mailbox of ${target} is full (${capacity} messages, mailbox.capacity)`);
  }
}

/** The message could not be delivered (no such actor, or it stopped); it went to dead letters. */
export class DeadLetterError extends GranaryError {
  static override readonly code = 'ERR_DEAD_LETTER';
  override readonly name = 'DeadLetterError';
  constructor(
    readonly target: string,
    /** Why it was dead-lettered, e.g. `not-found`, `stopped`. */
    readonly reason: string,
  ) {
    super(`message to ${target} went to dead letters (${reason})`);
  }
}

/** `spawnNamed` was given a name that a live actor already has. */
export class NameExistsError extends GranaryError {
  static override readonly code = 'ERR_NAME_EXISTS';
  override readonly name = 'NameExistsError';
  constructor(readonly id: string) {
    super(`an actor with id "${id}" already exists (spawnNamed name)`);
  }
}

/** A request was cancelled through its `signal`. */
export class AbortError extends GranaryError {
  static override readonly code = 'ERR_ABORTED';
  override readonly name = 'AbortError';
  constructor(
    readonly target: string,
    cause?: unknown,
  ) {
    super(`request to ${target} was aborted (signal)`, { cause });
  }
}

/**
 * A construction option (of a system, a remote, a cluster, a pool, a kind...) is missing or out
 * of range; `option` names it, as the user wrote it. Thrown before anything starts.
 */
export class InvalidOptionError extends GranaryError {
  static override readonly code = 'ERR_INVALID_OPTION';
  override readonly name = 'InvalidOptionError';
  constructor(
    /** The option, e.g. `mailbox.capacity`. */
    readonly option: string,
    detail: string,
  ) {
    super(`invalid option ${option}: ${detail}`);
  }
}

/**
 * An argument of a call (a method or function, not a constructor's options) cannot be accepted;
 * `argument` names it, e.g. `identity` or `options.timeoutMs`. Nothing was done.
 */
export class InvalidArgumentError extends GranaryError {
  static override readonly code = 'ERR_INVALID_ARGUMENT';
  override readonly name = 'InvalidArgumentError';
  constructor(
    /** The argument, e.g. `identity` or `options.timeoutMs`. */
    readonly argument: string,
    detail: string,
  ) {
    super(`invalid argument ${argument}: ${detail}`);
  }
}

/** The actor system was shut down: no more spawns, and pending requests are rejected. */
export class SystemShutdownError extends GranaryError {
  static override readonly code = 'ERR_SHUTDOWN';
  override readonly name = 'SystemShutdownError';
  constructor(readonly system: string) {
    super(`actor system "${system}" is shut down (shutdown)`);
  }
}

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

/** A serialized message is larger than the remote's limit (RemoteOptions.maxMessageBytes). */
export class MessageTooLargeError extends GranaryError {
  static override readonly code = 'ERR_MESSAGE_TOO_LARGE';
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
    );
  }
}

/** A message type name has no codec in this process's serialization registry. */
export class UnknownTypeError extends GranaryError {
  static override readonly code = 'ERR_UNKNOWN_TYPE';
  override readonly name = 'UnknownTypeError';
  constructor(
    readonly typeName: string,
    message = `unknown message type '${typeName}' (serialization.registerRoot)`,
  ) {
    super(message);
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

/** Remote spawn of a kind the target node never registered (remote.registerKind). */
export class UnknownKindError extends GranaryError {
  static override readonly code = 'ERR_UNKNOWN_KIND';
  override readonly name = 'UnknownKindError';
  constructor(
    readonly kind: string,
    message = `unknown kind '${kind}': register it on the target node with remote.registerKind()`,
  ) {
    super(message);
  }
}

/** Classes by code, for every serialization registry of this process (see registerErrorClasses). */
const known = new Map<string, ErrorClass>();

/**
 * Makes errors with these classes' codes come off the wire as instances of the classes (their
 * data fields set; the constructor is not run), so `instanceof` works as well as `is()`. Each
 * package of Granary registers its own classes; register yours the same way. A code that is
 * already registered keeps its first class: a second copy of a package loaded later, or a class
 * that reuses a built-in code, does not take it over (`is()` matches either way).
 * @throws InvalidArgumentError for a class without a static `code`.
 */
export function registerErrorClasses(...classes: ErrorClass[]): void {
  for (const errorClass of classes) {
    const code = errorClass.code;
    if (typeof code !== 'string') {
      throw new InvalidArgumentError('classes', `${errorClass.name} has no static code`);
    }
    if (!known.has(code)) known.set(code, errorClass);
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
 * its link is closed with this as the reason. `limit` names the option.
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

/**
 * A message cannot travel as JSON: a value JSON cannot carry (a BigInt, a Map or Set, a
 * function, a symbol), a cycle, or nesting deeper than MAX_JSON_DEPTH. `path` locates the
 * value (`$.items[3].id`). Nothing was sent; on a receiver, the message was dead-lettered.
 */
export class SerializationError extends GranaryError {
  static override readonly code = 'ERR_SERIALIZATION';
  override readonly name = 'SerializationError';
  constructor(
    /** Where in the message, e.g. `$.items[3].id` (`$` is the message itself). */
    readonly path: string,
    detail: string,
  ) {
    super(`cannot serialize the message: ${detail} at ${path}`);
  }
}

/** The class registered for `code` with {@link registerErrorClasses}, if any. */
export function errorClassOf(code: string): ErrorClass | undefined {
  return known.get(code);
}

registerErrorClasses(
  GranaryError,
  RemoteError,
  TimeoutError,
  MailboxFullError,
  DeadLetterError,
  NameExistsError,
  AbortError,
  InvalidOptionError,
  InvalidArgumentError,
  SystemShutdownError,
  EndpointUnavailableError,
  MessageTooLargeError,
  UnknownTypeError,
  HandshakeError,
  UnknownKindError,
  InsecureRemoteError,
  RemoteLimitError,
  PeerNotReadingError,
  LinkLostError,
  RemoteBackpressureError,
  SerializationError,
);

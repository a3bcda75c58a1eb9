/**
 * What a message or a remote spawn cannot be: too large, of an unregistered type, not JSON, of
 * an unregistered kind. Re-exported by `errors.ts`.
 */
import { GranaryError } from './granary-error';

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

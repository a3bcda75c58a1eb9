import { GranaryError, registerErrorClasses } from '@granary/core';

/**
 * Errors of generated clients and grains (subclasses of core's `GranaryError`). Codes are stable strings: a grain on another node
 * throws `UnimplementedError`, the cluster carries it as a `GrainError` with the same `code`,
 * and the client turns it back into an `UnimplementedError`.
 */

/** The grain does not implement the called rpc (older grain code, or a method left out). */
export class UnimplementedError extends GranaryError {
  static override readonly code = 'ERR_UNIMPLEMENTED';
  override readonly name = 'UnimplementedError';
  constructor(
    /** The method identity, `package.Service/Method`, or the message type for a plain message. */
    readonly method: string,
    message?: string,
    options?: { cause?: unknown },
  ) {
    super(message ?? `method ${method} is not implemented by the grain`, options);
  }
}

/** A payload that does not decode as the message type the method declares. */
export class PayloadDecodeError extends GranaryError {
  static override readonly code = 'ERR_PAYLOAD_DECODE';
  override readonly name = 'PayloadDecodeError';
  constructor(
    readonly typeName: string,
    options?: { cause?: unknown },
  ) {
    super(
      `payload is not a valid ${typeName}: were the client and the grain generated from the same .proto?`,
      options,
    );
  }
}

/**
 * `MessageCodec.from()` got a message of another type: a protobufjs message whose type has
 * another name, or a value tagged with another type name.
 */
export class WrongMessageTypeError extends GranaryError {
  static override readonly code = 'ERR_WRONG_MESSAGE_TYPE';
  override readonly name = 'WrongMessageTypeError';
  constructor(
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`expected a ${expected} message, got a ${actual}`);
  }
}

/** A grain rpc method that returned (or resolved) `undefined` or `null` instead of its response. */
export class MissingResponseError extends GranaryError {
  static override readonly code = 'ERR_MISSING_RESPONSE';
  override readonly name = 'MissingResponseError';
  constructor(
    readonly method: string,
    readonly typeName: string,
  ) {
    super(
      `grain method for ${method} returned nothing; it must return a ${typeName} (or a promise of one)`,
    );
  }
}

/** A reply to a grain call that is not a `granary.GrainInvokeResult`. */
export class InvalidReplyError extends GranaryError {
  static override readonly code = 'ERR_INVALID_REPLY';
  override readonly name = 'InvalidReplyError';
  constructor(
    readonly method: string,
    readonly reply: unknown,
  ) {
    super(
      `reply to ${method} is not a granary.GrainInvokeResult (got ${describe(reply)}): ` +
        `does the grain extend the generated base class?`,
    );
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value !== 'object') return typeof value;
  return (value as object).constructor?.name ?? 'object';
}

registerErrorClasses(
  UnimplementedError,
  PayloadDecodeError,
  MissingResponseError,
  InvalidReplyError,
  WrongMessageTypeError,
);

/**
 * Errors of generated clients and grains. Codes are stable strings: a grain on another node
 * throws `UnimplementedError`, the cluster carries it as a `GrainError` with the same `code`,
 * and the client turns it back into an `UnimplementedError`.
 */

/** The grain does not implement the called rpc (older grain code, or a method left out). */
export class UnimplementedError extends Error {
  override readonly name = 'UnimplementedError';
  readonly code = 'ERR_UNIMPLEMENTED';
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
export class PayloadDecodeError extends Error {
  override readonly name = 'PayloadDecodeError';
  readonly code = 'ERR_PAYLOAD_DECODE';
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

/** A grain rpc method that returned (or resolved) `undefined` or `null` instead of its response. */
export class MissingResponseError extends Error {
  override readonly name = 'MissingResponseError';
  readonly code = 'ERR_MISSING_RESPONSE';
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
export class InvalidReplyError extends Error {
  override readonly name = 'InvalidReplyError';
  readonly code = 'ERR_INVALID_REPLY';
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

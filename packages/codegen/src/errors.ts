import { GranaryError, registerErrorClasses } from '@granary/core';

/**
 * Errors of the generator and its two commands, Granary errors like every package's (fixed
 * `name`, `code`, `cause`; match with `is()`). The plugin reports `message` through
 * CodeGeneratorResponse.error, the CLI prints it. A bad command-line or `--granary_opt` option is
 * core's `InvalidOptionError`.
 */

/** Base class of every codegen error. */
export class CodegenError extends GranaryError {
  static override readonly code: string = 'ERR_CODEGEN';
  override readonly name: string = 'CodegenError';
}

/**
 * A .proto feature the generator does not support: editions, a field typed with a
 * google/protobuf type other than the well-known ones, a non-ASCII bytes default.
 */
export class UnsupportedProtoError extends CodegenError {
  static override readonly code = 'ERR_UNSUPPORTED_PROTO';
  override readonly name = 'UnsupportedProtoError';
}

/** A .proto file that cannot be read or parsed (granary-codegen path). */
export class ProtoParseError extends CodegenError {
  static override readonly code = 'ERR_PROTO_PARSE';
  override readonly name = 'ProtoParseError';
}

/**
 * Two declarations would get the same TypeScript name in one generated module. The generator no
 * longer throws it (such names are told apart with trailing `_`, see the README's Names); the
 * class stays so code that matches it keeps compiling.
 */
export class NameClashError extends CodegenError {
  static override readonly code = 'ERR_NAME_CLASH';
  override readonly name = 'NameClashError';
}

/**
 * A gRPC client of the GrpcGateway went past one of its bounds (`option` names it): its request
 * did not arrive whole within `receiveTimeoutMs`. Answered as RESOURCE_EXHAUSTED; other calls
 * are unaffected.
 */
export class GatewayLimitError extends CodegenError {
  static override readonly code = 'ERR_GATEWAY_LIMIT';
  override readonly name = 'GatewayLimitError';

  constructor(
    /** The GrpcGatewayOptions field of the bound. */
    readonly option: string,
    message: string,
  ) {
    super(`${message} (${option})`);
  }
}

registerErrorClasses(
  CodegenError,
  UnsupportedProtoError,
  ProtoParseError,
  NameClashError,
  GatewayLimitError,
);

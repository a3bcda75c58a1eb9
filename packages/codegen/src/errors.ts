/**
 * Errors of the generator and its two commands. Each has a fixed `name` and `code`; the
 * plugin reports `message` through CodeGeneratorResponse.error, the CLI prints it.
 */

/** Base class of every codegen error. */
export class CodegenError extends Error {
  override readonly name: string = 'CodegenError';
  readonly code: string = 'ERR_CODEGEN';
}

/** A streaming rpc: grain calls are unary request/response. */
export class StreamingRpcError extends CodegenError {
  override readonly name = 'StreamingRpcError';
  override readonly code = 'ERR_STREAMING_RPC';
  constructor(
    readonly rpc: string,
    readonly file: string,
    direction: string,
  ) {
    super(
      `rpc ${rpc} in ${file} is ${direction} streaming; grain methods are unary ` +
        `(one request, one response): remove the stream keyword or move the rpc to a gRPC service`,
    );
  }
}

/** A .proto feature the generator does not support (groups, editions, unknown imports). */
export class UnsupportedProtoError extends CodegenError {
  override readonly name = 'UnsupportedProtoError';
  override readonly code = 'ERR_UNSUPPORTED_PROTO';
}

/** A .proto file that cannot be read or parsed (granary-codegen path). */
export class ProtoParseError extends CodegenError {
  override readonly name = 'ProtoParseError';
  override readonly code = 'ERR_PROTO_PARSE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A bad `--granary_opt` parameter or command-line argument. */
export class InvalidOptionError extends CodegenError {
  override readonly name = 'InvalidOptionError';
  override readonly code = 'ERR_INVALID_OPTION';
}

/** Two declarations would get the same TypeScript name in one generated module. */
export class NameClashError extends CodegenError {
  override readonly name = 'NameClashError';
  override readonly code = 'ERR_NAME_CLASH';
}

/**
 * Errors of the generator and its two commands. Each has a fixed `name` and `code`; the
 * plugin reports `message` through CodeGeneratorResponse.error, the CLI prints it.
 */

/** Base class of every codegen error. */
export class CodegenError extends Error {
  override readonly name: string = 'CodegenError';
  readonly code: string = 'ERR_CODEGEN';
}

/**
 * A .proto feature the generator does not support: editions, a field typed with a
 * google/protobuf type other than the well-known ones, a 64-bit or non-ASCII bytes default.
 */
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

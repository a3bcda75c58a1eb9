import * as protobuf from 'protobufjs';
import {
  GranaryError,
  UnknownTypeError,
  errorClassOf,
  errorData,
  errorFromData,
  type ErrorClass,
  type ErrorData,
} from '../errors';
import { decodeJson, decodeJsonAt, encodeJson, encodeJsonText } from './internal/json-codec';
import { loadProto } from './internal/proto-files';
import { TYPE_NAME, withTypeName } from './type-name';

/**
 * protobufjs' Type class, read once: compiled to CommonJS, each `protobuf.X` of a namespace
 * import is a getter call, and the checks that use it run for every JSON message sent.
 */
const ProtobufType = protobuf.Type;

/** How a payload is encoded on the wire (the `format` field of a remote envelope). */
export const SerializationFormat = {
  /** A `Uint8Array` passed through untouched. */
  Bytes: 0,
  /** Plain data as UTF-8 JSON (nested `Uint8Array` kept as bytes). */
  Json: 1,
  /** A registered protobufjs type, by full name. */
  Protobuf: 2,
  /**
   * An `Error` as its data (name, code, message, plain fields, cause), rebuilt as its class when
   * the code has one registered, else as a `RemoteError`.
   */
  Error: 3,
} as const;

/** One of the {@link SerializationFormat} values. */
export type SerializationFormat = (typeof SerializationFormat)[keyof typeof SerializationFormat];

/** A message ready for the wire. */
export interface SerializedMessage {
  typeName: string;
  format: SerializationFormat;
  bytes: Uint8Array;
}

/**
 * A message as the remote sends it: its bytes, or for JSON its text, which the remote writes
 * into the frame as UTF-8 itself (no Buffer per message).
 */
export interface WireMessage {
  typeName: string;
  format: SerializationFormat;
  /** Set unless `text` is. */
  bytes: Uint8Array | undefined;
  /** JSON text (format Json). */
  text: string | undefined;
}

/** Type name of raw bytes. */
export const BYTES_TYPE_NAME = 'bytes';
/** Type name of untagged plain data. */
export const JSON_TYPE_NAME = 'json';
/** Type name of a serialized `Error`. */
export const ERROR_TYPE_NAME = 'granary.Error';

export type { ErrorClass } from '../errors';

/**
 * Maps wire type names to codecs: protobufjs types registered by full name ('pkg.Msg'), JSON
 * for plain data, bytes for `Uint8Array`, and a small JSON form for `Error` instances.
 *
 * @example
 * serialization.registerRoot(protobuf.loadSync('ping.proto'));
 * const { typeName, format, bytes } = serialization.serialize(Ping.create({ n: 1 }));
 * const ping = serialization.deserialize(typeName, bytes, format);
 */
export class SerializationRegistry {
  private readonly types = new Map<string, protobuf.Type>();
  private readonly encodables = new Map<string, (message: object) => object>();
  private readonly errorClasses = new Map<string, ErrorClass>();
  private readonly classOf = (code: string): ErrorClass | undefined =>
    this.errorClasses.get(code) ?? errorClassOf(code);

  /**
   * Rebuilds errors with this `code` as instances of `errorClass` in this registry only (data
   * fields set; the constructor is not run). Classes registered process-wide with
   * `registerErrorClasses` (every Granary error class is) need no call; other codes become
   * RemoteError.
   */
  registerErrorClass(code: string, errorClass: ErrorClass): void {
    this.errorClasses.set(code, errorClass);
  }

  /** Registers every message type of `root` (nested namespaces included) by full name. */
  registerRoot(root: protobuf.Root): void {
    root.resolveAll();
    const visit = (ns: protobuf.NamespaceBase): void => {
      for (const nested of ns.nestedArray) {
        if (nested instanceof protobuf.Type) this.registerType(nested);
        if (nested instanceof protobuf.Namespace || nested instanceof protobuf.Type) visit(nested);
      }
    };
    visit(root);
  }

  /**
   * Registers one protobufjs message type under its full name (no leading dot). `toEncodable`,
   * when given, turns a value of the type that is not a protobufjs message of it (a tagged plain
   * object) into what protobufjs encodes: a generated codec's objects hold defaults it filled in
   * that were never set, which protobufjs alone would write.
   */
  registerType(type: protobuf.Type, toEncodable?: (message: object) => object): void {
    const name = fullNameOf(type);
    this.types.set(name, type);
    if (toEncodable === undefined) this.encodables.delete(name);
    else this.encodables.set(name, toEncodable);
    // Decoded messages and Type.create() instances then carry the tag like withTypeName ones.
    Object.defineProperty(type.ctor.prototype, TYPE_NAME, { value: name, configurable: true });
  }

  /** The protobufjs type registered under `typeName`, if any. */
  lookup(typeName: string): protobuf.Type | undefined {
    return this.types.get(typeName);
  }

  /** The wire type name of `message`: its TYPE_NAME tag, its protobufjs type, else JSON. */
  typeNameOf(message: unknown): string {
    if (message instanceof Uint8Array) return BYTES_TYPE_NAME;
    if (message instanceof Error) return ERROR_TYPE_NAME;
    if (message !== null && typeof message === 'object') {
      const tag = (message as { [TYPE_NAME]?: string })[TYPE_NAME];
      if (tag !== undefined) return tag;
      const $type = (message as { $type?: unknown }).$type;
      if ($type instanceof ProtobufType) return fullNameOf($type);
    }
    return JSON_TYPE_NAME;
  }

  /**
   * Encodes `message` for the wire.
   * @throws UnknownTypeError when the value cannot be carried (undefined, a function, a symbol).
   */
  serialize(message: unknown): SerializedMessage {
    const w = this.serializeForWire(message);
    return { typeName: w.typeName, format: w.format, bytes: w.bytes ?? Buffer.from(w.text!) };
  }

  /**
   * {@link serialize} for the remote: JSON stays text (see {@link WireMessage}).
   * @throws UnknownTypeError when the value cannot be carried (undefined, a function, a symbol).
   */
  serializeForWire(message: unknown): WireMessage {
    if (message instanceof Uint8Array) {
      return {
        typeName: BYTES_TYPE_NAME,
        format: SerializationFormat.Bytes,
        bytes: message,
        text: undefined,
      };
    }
    if (message instanceof Error) return { ...serializeError(message), text: undefined };
    const typeName = this.typeNameOf(message);
    const type = this.types.get(typeName) ?? ownTypeOf(message);
    if (type) {
      const toEncodable = this.encodables.get(typeName);
      const plain = toEncodable !== undefined && !(message instanceof type.ctor);
      const bytes = encodeProto(type, plain ? toEncodable(message as object) : message);
      return { typeName, format: SerializationFormat.Protobuf, bytes, text: undefined };
    }
    const text = encodeJsonText(message);
    if (text === undefined) {
      throw new UnknownTypeError(
        typeof message,
        `cannot serialize a value of type ${typeof message}`,
      );
    }
    return { typeName, format: SerializationFormat.Json, bytes: undefined, text };
  }

  /**
   * Decodes a payload. `format` defaults to protobuf for registered names, bytes/JSON/Error
   * for the built-in names.
   * @throws UnknownTypeError when a protobuf type name is not registered in this process.
   */
  deserialize(typeName: string, bytes: Uint8Array, format?: SerializationFormat): unknown {
    switch (format ?? this.formatOf(typeName)) {
      case SerializationFormat.Bytes:
        return bytes;
      case SerializationFormat.Json:
        return this.tagJson(typeName, decodeJson(bytes));
      case SerializationFormat.Error: {
        return errorFromData(decodeJson(bytes) as ErrorData, this.classOf);
      }
      default:
        return this.protobufType(typeName).decode(bytes);
    }
  }

  /**
   * Decodes the payload at `reader.buf[start, end)`, a message inside a bigger frame, without
   * copying it out or making a reader for it (the remote's hot path). Same results and errors
   * as {@link deserialize}; a protobuf payload must end exactly at `end`.
   * @throws UnknownTypeError when a protobuf type name is not registered in this process.
   */
  deserializeFrom(
    typeName: string,
    reader: protobuf.Reader,
    start: number,
    end: number,
    format?: SerializationFormat,
  ): unknown {
    const f = format ?? this.formatOf(typeName);
    if (f === SerializationFormat.Json) {
      return this.tagJson(typeName, decodeJsonAt(reader.buf, start, end));
    }
    if (f !== SerializationFormat.Protobuf) {
      return this.deserialize(typeName, reader.buf.subarray(start, end), f);
    }
    const type = this.protobufType(typeName);
    const len = reader.len;
    reader.pos = start;
    // Bounded at the payload's end, as if it were its own array: an overrun throws.
    reader.len = end;
    try {
      const message = type.decode(reader, end - start);
      if (reader.pos !== end) throw new RangeError(`payload of ${typeName} overruns its length`);
      return message;
    } finally {
      reader.len = len;
    }
  }

  private protobufType(typeName: string): protobuf.Type {
    const type = this.types.get(typeName);
    if (!type) {
      throw new UnknownTypeError(
        typeName,
        `unknown message type '${typeName}': register it with serialization.registerRoot() or registerType()`,
      );
    }
    return type;
  }

  /** A JSON value sent with its own type name (withTypeName) gets that name again. */
  private tagJson(typeName: string, value: unknown): unknown {
    if (typeName !== JSON_TYPE_NAME && value !== null && typeof value === 'object') {
      withTypeName(typeName, value);
    }
    return value;
  }

  private formatOf(typeName: string): SerializationFormat {
    if (typeName === BYTES_TYPE_NAME) return SerializationFormat.Bytes;
    if (typeName === JSON_TYPE_NAME) return SerializationFormat.Json;
    if (typeName === ERROR_TYPE_NAME) return SerializationFormat.Error;
    return SerializationFormat.Protobuf;
  }
}

/**
 * One protobufjs Writer for every encode (reset after each): a Writer per message (an object
 * and a 128-byte buffer) was a measurable share of a remote send's garbage. A nested call (a
 * getter that serializes while being encoded) gets its own.
 */
const sharedWriter = protobuf.Writer.create();
let sharedWriterBusy = false;

/** Up to this many bytes are copied out of the shared writer in a JS loop, not by a view + set. */
const SMALL_COPY = 64;

function encodeProto(type: protobuf.Type, message: unknown): Uint8Array {
  if (sharedWriterBusy) return type.encode(message as object).finish();
  sharedWriterBusy = true;
  try {
    const w = type.encode(message as object, sharedWriter);
    const n = w.pos;
    const src = w.buf;
    // Writer.finish() makes a Buffer view (subarray) to copy from: ~2% of a remote request.
    const out = new Uint8Array(n);
    if (n <= SMALL_COPY) for (let i = 0; i < n; i++) out[i] = src[i]!;
    else out.set(src.subarray(0, n));
    return out;
  } finally {
    sharedWriter.reset();
    sharedWriterBusy = false;
  }
}

function fullNameOf(type: protobuf.Type): string {
  return type.fullName.startsWith('.') ? type.fullName.slice(1) : type.fullName;
}

/** A protobufjs message instance knows its own type even when nobody registered it. */
function ownTypeOf(message: unknown): protobuf.Type | undefined {
  if (message === null || typeof message !== 'object') return undefined;
  const $type = (message as { $type?: unknown }).$type;
  return $type instanceof ProtobufType ? $type : undefined;
}

function serializeError(error: Error): SerializedMessage {
  const wire = error instanceof GranaryError ? error.toJSON() : errorData(error);
  return { typeName: ERROR_TYPE_NAME, format: SerializationFormat.Error, bytes: encodeJson(wire)! };
}

/**
 * The process-wide registry, the default of every ActorSystem and remote, so generated code can
 * register its types at import time. It knows the `granary.*` messages out of the box.
 */
export const serialization = new SerializationRegistry();
serialization.registerRoot(loadProto('granary.proto'));

import { InvalidArgumentError, serialization } from '@granary/core';
import { checkWireTypes, type WireType } from './internal/check-wire-types';
import { plainMessage, type PlainType } from './internal/plain-message';
import type { StateCodec } from './state-codec';

/**
 * The part of a protobufjs `Type` the codec uses (structural, so any protobufjs version fits).
 */
export interface ProtobufStateType extends WireType {
  readonly fullName: string;
  encode(message: object): { finish(): Uint8Array };
  decode(bytes: Uint8Array): object;
  /** protobufjs' check of a decoded message: null if valid, else the reason. */
  verify(message: { [key: string]: unknown }): string | null;
  /** Resolves field types (enums, nested messages), so the wire check knows them. */
  resolveAll?(): unknown;
  /** A message from a plain object (decimal strings for 64-bit fields, Uint8Array for bytes). */
  fromObject?(object: { [key: string]: unknown }): object;
}

/**
 * A message codec as generated modules export one per message (`PingState.encode/decode`, from
 * `@granary/codegen`): its `decode` already returns the generated representation.
 */
export interface GeneratedMessageCodec<T> {
  /** Full protobuf name, no leading dot. */
  readonly typeName: string;
  /**
   * Encodes a `T`. Typed `never` so that `T` is read from `decode` alone: a generated codec's
   * `encode` takes the looser `MessageInit<T>` (every field optional), and inferring from it
   * made the state type all-optional, so a kind's `initial: () => ({})` compiled for a grain
   * whose `this.state` declares every field.
   */
  encode(message: never): Uint8Array;
  decode(bytes: Uint8Array): T;
}

/** Where registered protobuf types are looked up: `serialization` of @granary/core fits. */
export interface ProtobufTypeRegistry {
  lookup(typeName: string): ProtobufStateType | undefined;
}

/**
 * State as a protobuf message, in the representation generated code declares: 64-bit integers
 * as decimal strings, enums as numbers, bytes as plain `Uint8Array` (never a protobufjs `Long`
 * or a Node `Buffer`), implicit-presence scalars filled with their zero value.
 *
 * `type` is a generated message codec (`protobufStateCodec(PingState)`, the codegen's own
 * encode and decode), a protobufjs Type, or a full type name (`'shop.Cart'`, no leading dot)
 * looked up in `registry`, by default the process-wide `serialization` registry of
 * @granary/core (where generated code registers its types).
 * Decoding a Type first checks every known field's wire type against the schema (protobufjs
 * does not), then decodes and `verify`s the message, so state written by an incompatible schema
 * becomes a StateDecodeError instead of a wrong message.
 *
 * @example
 * import { PingState } from './gen/ping.granary';
 * const codec = protobufStateCodec(PingState); // StateCodec<PingState>
 * const byName = protobufStateCodec<Cart>('shop.Cart');
 */
export function protobufStateCodec<T extends object>(
  type: GeneratedMessageCodec<T> | ProtobufStateType | string,
  registry: ProtobufTypeRegistry = serialization,
): StateCodec<T> {
  if (typeof type === 'object' && type !== null && isGenerated(type)) {
    return {
      name: `protobuf:${type.typeName}`,
      encode: (s) => type.encode(s as never),
      decode: (b) => type.decode(b),
    };
  }
  const resolved = typeof type === 'string' ? lookup(type, registry) : type;
  resolved.resolveAll?.();
  const typeName = resolved.fullName.replace(/^\./, '');
  const plain = isPlainType(resolved) ? resolved : undefined;
  const fromObject = resolved.fromObject?.bind(resolved);
  return {
    name: `protobuf:${typeName}`,
    // fromObject: decimal strings and Uint8Arrays (what decode hands out) become Longs and bytes.
    encode: (state) =>
      resolved
        .encode(fromObject ? fromObject(state as { [key: string]: unknown }) : state)
        .finish(),
    decode: (bytes) => {
      checkWireTypes(resolved, bytes);
      const message = resolved.decode(bytes);
      const problem = resolved.verify(message as { [key: string]: unknown });
      if (problem) throw new Error(problem);
      return (plain ? plainMessage(plain, message) : message) as T;
    },
  };
}

function isGenerated<T>(
  type: GeneratedMessageCodec<T> | ProtobufStateType,
): type is GeneratedMessageCodec<T> {
  return typeof (type as GeneratedMessageCodec<T>).typeName === 'string' && !('fullName' in type);
}

function isPlainType(type: ProtobufStateType): type is ProtobufStateType & PlainType {
  const t = type as Partial<PlainType>;
  return Array.isArray(t.fieldsArray) && typeof t.toObject === 'function';
}

function lookup(typeName: string, registry: ProtobufTypeRegistry): ProtobufStateType {
  const type = registry.lookup(typeName.replace(/^\./, ''));
  if (!type) {
    throw new InvalidArgumentError(
      'typeName',
      `protobufStateCodec: type ${typeName} is not registered (serialization.registerRoot / registerType)`,
    );
  }
  return type;
}

import { InvalidArgumentError, serialization } from '@granary/core';
import { checkWireTypes, type WireType } from './internal/check-wire-types';
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
}

/** Where registered protobuf types are looked up: `serialization` of @granary/core fits. */
export interface ProtobufTypeRegistry {
  lookup(typeName: string): ProtobufStateType | undefined;
}

/**
 * State as a protobuf message: `type` is a protobufjs Type, or a full type name (`'shop.Cart'`,
 * no leading dot) looked up in `registry`, by default the process-wide `serialization` registry
 * of @granary/core (where generated code registers its types).
 * Decoding first checks every known field's wire type against the schema (protobufjs does not),
 * then decodes and `verify`s the message, so state written by an incompatible schema becomes a
 * StateDecodeError instead of a wrong message.
 *
 * @example
 * serialization.registerRoot(root);
 * const codec = protobufStateCodec<Cart>('shop.Cart');
 */
export function protobufStateCodec<T extends object>(
  type: ProtobufStateType | string,
  registry: ProtobufTypeRegistry = serialization,
): StateCodec<T> {
  const resolved = typeof type === 'string' ? lookup(type, registry) : type;
  resolved.resolveAll?.();
  const typeName = resolved.fullName.replace(/^\./, '');
  return {
    name: `protobuf:${typeName}`,
    encode: (state) => resolved.encode(state).finish(),
    decode: (bytes) => {
      checkWireTypes(resolved, bytes);
      const message = resolved.decode(bytes);
      const problem = resolved.verify(message as { [key: string]: unknown });
      if (problem) throw new Error(problem);
      return message as T;
    },
  };
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

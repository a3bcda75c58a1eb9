import type { IConversionOptions, Message, Type } from 'protobufjs';
import { complete, withoutFilledDefaults } from './completion';
import { PayloadDecodeError, WrongMessageTypeError } from './errors';
import { checkFields } from './field-check';
import { checkLongs } from './long-check';
import { tagTypeName, typeNameOf } from './type-tag';

/**
 * What a message of type `T` may be written as where one is passed in (client requests, grain
 * responses, `encode`, `create`): any field may be left out, at any depth, and is then its
 * default (proto3 zero, proto2 `[default]`, empty list or map, absent message).
 */
export type MessageInit<T> = T extends Uint8Array
  ? T
  : T extends readonly (infer E)[]
    ? MessageInit<E>[]
    : T extends object
      ? string extends keyof T
        ? { [K in keyof T]: MessageInit<T[K]> } // a map: entries given are entries
        : { [K in keyof T]?: MessageInit<T[K]> }
      : T;

/**
 * Encoder and decoder of one message type, as generated modules export it under the message's
 * name (`PingMessage.encode(...)`). Objects use the representation documented in the README:
 * 64-bit integers as decimal strings, enums as numbers, bytes as `Uint8Array`, unset message
 * fields absent.
 */
export interface MessageCodec<T> {
  /** Full protobuf name, no leading dot (`messages.PingMessage`). */
  readonly typeName: string;
  /**
   * Protobuf binary encoding of `message` (fields left out are not on the wire). A 64-bit field
   * that is not a decimal string in its type's range (or a safe integer) throws
   * InvalidArgumentError naming it, rather than encoding a wrong number.
   */
  encode(message: MessageInit<T>): Uint8Array;
  /** Decodes `bytes`; throws `PayloadDecodeError` when they are not this type. */
  decode(bytes: Uint8Array): T;
  /**
   * A complete message from `init` (defaults filled in as `decode` fills them), tagged with its
   * type name, so `cluster.send` / `ctx.respond` carry it as this protobuf type, not JSON.
   */
  create(init?: MessageInit<T>): T;
  /** True when `value` carries this type's name (tagged by `create`, or decoded by a registry). */
  is(value: unknown): boolean;
  /**
   * `value` (a message of this type as a registry decoded it, e.g. a protobufjs message with
   * `Long`s, as `receiveDefault` gets it from another node) in the representation above. A
   * protobufjs message of the same type from another protobufjs root is converted through its
   * encoding (exact, presence and oneof cases kept); one of another type, or a value tagged
   * with another type, is refused with `WrongMessageTypeError`.
   */
  from(value: unknown): T;
}

/**
 * toObject options giving the documented representation. `defaults: false` keeps presence
 * (unset message fields, proto3 `optional` and proto2 `optional` stay absent); the defaults of
 * implicit-presence scalars are filled in afterwards by `complete`.
 */
const TO_OBJECT: IConversionOptions = {
  longs: String,
  enums: Number,
  defaults: false,
  arrays: true,
  objects: true,
  oneofs: true,
};

/** A `MessageCodec` over a resolved protobufjs type. */
export class ProtobufMessageCodec<T> implements MessageCodec<T> {
  readonly typeName: string;

  constructor(private readonly type: Type) {
    this.typeName = type.fullName.replace(/^\./, '');
  }

  encode(message: MessageInit<T>): Uint8Array {
    const object = message as Record<string, unknown>;
    if (!(object instanceof this.type.ctor)) {
      checkFields(this.type, object, this.typeName);
      checkLongs(this.type, object, this.typeName);
    }
    return this.type
      .encode(this.type.fromObject(withoutFilledDefaults(this.type, object)))
      .finish();
  }

  decode(bytes: Uint8Array): T {
    let object: Record<string, unknown>;
    try {
      object = this.type.toObject(this.type.decode(bytes), TO_OBJECT);
    } catch (err) {
      throw new PayloadDecodeError(this.typeName, { cause: err });
    }
    complete(this.type, object);
    return object as T;
  }

  create(init: MessageInit<T> = {} as MessageInit<T>): T {
    return tagTypeName(this.typeName, this.from(init) as object) as T;
  }

  is(value: unknown): boolean {
    return typeNameOf(value) === this.typeName;
  }

  from(value: unknown): T {
    if (typeof value !== 'object' || value === null) {
      throw new PayloadDecodeError(this.typeName, { cause: new TypeError(`got ${typeof value}`) });
    }
    let message: Message;
    if (value instanceof this.type.ctor) {
      message = value as Message;
    } else if (isProtobufMessage(value)) {
      // Another root's message: its prototype holds every field's default, which fromObject
      // would read as set values (all oneof members "set"); its own encoding is exact.
      const other = value.$type;
      if (other.fullName !== this.type.fullName) throw this.wrongType(other.fullName);
      message = this.type.decode(other.encode(value).finish());
    } else {
      const tag = typeNameOf(value);
      if (tag !== undefined && tag !== this.typeName) throw this.wrongType(tag);
      checkFields(this.type, value, this.typeName);
      checkLongs(this.type, value as Record<string, unknown>, this.typeName);
      message = this.type.fromObject(
        withoutFilledDefaults(this.type, value as Record<string, unknown>),
      );
    }
    const object = this.type.toObject(message, TO_OBJECT);
    complete(this.type, object);
    return object as T;
  }

  private wrongType(actual: string): WrongMessageTypeError {
    return new WrongMessageTypeError(this.typeName, actual.replace(/^\./, ''));
  }
}

/**
 * A message built by protobufjs (any root, any copy of protobufjs): it carries its reflected
 * type. Duck-typed, since a duplicated protobufjs package has its own `Type` class.
 */
function isProtobufMessage(value: object): value is Message & { $type: Type } {
  const type = (value as { $type?: Partial<Type> }).$type;
  return typeof type?.encode === 'function' && typeof type.fullName === 'string';
}

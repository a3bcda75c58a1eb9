import type { IConversionOptions, Message, Type } from 'protobufjs';
import { PayloadDecodeError } from './errors';
import { tagTypeName, typeNameOf } from './type-tag';

/**
 * Encoder and decoder of one message type, as generated modules export it under the message's
 * name (`PingMessage.encode(...)`). Objects use the representation documented in the README:
 * 64-bit integers as decimal strings, enums as numbers, bytes as `Uint8Array`, unset message
 * fields absent.
 */
export interface MessageCodec<T> {
  /** Full protobuf name, no leading dot (`messages.PingMessage`). */
  readonly typeName: string;
  /** Protobuf binary encoding of `message`. */
  encode(message: T): Uint8Array;
  /** Decodes `bytes`; throws `PayloadDecodeError` when they are not this type. */
  decode(bytes: Uint8Array): T;
  /**
   * Returns `message` tagged with its type name, so `cluster.send` / `ctx.respond` carry it as
   * this protobuf type instead of JSON.
   */
  create(message: T): T;
  /** True when `value` carries this type's name (tagged by `create`, or decoded by a registry). */
  is(value: unknown): boolean;
  /**
   * `value` (a message of this type as a registry decoded it, e.g. a protobufjs message with
   * `Long`s, as `receiveDefault` gets it from another node) in the representation above.
   */
  from(value: unknown): T;
}

/** toObject options giving the documented representation. */
const TO_OBJECT: IConversionOptions = {
  longs: String,
  enums: Number,
  defaults: true,
  arrays: true,
  objects: true,
  oneofs: true,
};

/** How to clean one message-typed field after toObject (which sets unset messages to null). */
interface MessageFieldPlan {
  readonly name: string;
  readonly mode: 'single' | 'repeated' | 'map';
  readonly type: Type;
}

const plans = new WeakMap<Type, readonly MessageFieldPlan[]>();

function planOf(type: Type): readonly MessageFieldPlan[] {
  let plan = plans.get(type);
  if (plan === undefined) {
    plan = type.fieldsArray
      .map((f) => f.resolve())
      .filter((f) => f.resolvedType !== null && 'fieldsArray' in f.resolvedType)
      .map((f) => ({
        name: f.name,
        mode: f.map ? ('map' as const) : f.repeated ? ('repeated' as const) : ('single' as const),
        type: f.resolvedType as Type,
      }));
    plans.set(type, plan);
  }
  return plan;
}

/** Deletes the `null`s protobufjs leaves for unset message fields, at every depth. */
function dropUnsetMessages(type: Type, object: Record<string, unknown>): void {
  for (const field of planOf(type)) {
    const value = object[field.name];
    if (value === null || value === undefined) {
      delete object[field.name];
    } else if (field.mode === 'single') {
      dropUnsetMessages(field.type, value as Record<string, unknown>);
    } else {
      const items = field.mode === 'map' ? Object.values(value) : (value as unknown[]);
      for (const item of items) dropUnsetMessages(field.type, item as Record<string, unknown>);
    }
  }
}

/** A `MessageCodec` over a resolved protobufjs type. */
export class ProtobufMessageCodec<T> implements MessageCodec<T> {
  readonly typeName: string;

  constructor(private readonly type: Type) {
    this.typeName = type.fullName.replace(/^\./, '');
  }

  encode(message: T): Uint8Array {
    return this.type.encode(this.type.fromObject(message as Record<string, unknown>)).finish();
  }

  decode(bytes: Uint8Array): T {
    let object: Record<string, unknown>;
    try {
      object = this.type.toObject(this.type.decode(bytes), TO_OBJECT);
    } catch (err) {
      throw new PayloadDecodeError(this.typeName, { cause: err });
    }
    dropUnsetMessages(this.type, object);
    return object as T;
  }

  create(message: T): T {
    return tagTypeName(this.typeName, message as object) as T;
  }

  is(value: unknown): boolean {
    return typeNameOf(value) === this.typeName;
  }

  from(value: unknown): T {
    if (typeof value !== 'object' || value === null) {
      throw new PayloadDecodeError(this.typeName, { cause: new TypeError(`got ${typeof value}`) });
    }
    const message =
      value instanceof this.type.ctor
        ? (value as Message)
        : this.type.fromObject(value as Record<string, unknown>);
    const object = this.type.toObject(message, TO_OBJECT);
    dropUnsetMessages(this.type, object);
    return object as T;
  }
}

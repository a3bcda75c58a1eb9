import { Enum, Type } from 'protobufjs';
import type { Field, IConversionOptions, Message } from 'protobufjs';
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

/** Per message type: scalars to default when absent, and message fields to descend into. */
interface CompletionPlan {
  readonly defaults: readonly (readonly [name: string, value: () => unknown])[];
  readonly messages: readonly {
    readonly name: string;
    readonly mode: 'single' | 'repeated' | 'map';
    readonly type: Type;
  }[];
}

const plans = new WeakMap<Type, CompletionPlan>();

/** The zero value of an implicit-presence scalar in the documented representation. */
function zeroOf(field: Field): () => unknown {
  if (field.resolvedType instanceof Enum) return () => 0;
  switch (field.type) {
    case 'string':
      return () => '';
    case 'bool':
      return () => false;
    case 'bytes':
      return () => new Uint8Array(0);
    case 'int64':
    case 'uint64':
    case 'sint64':
    case 'fixed64':
    case 'sfixed64':
      return () => '0';
    default:
      return () => 0;
  }
}

function planOf(type: Type): CompletionPlan {
  let plan = plans.get(type);
  if (plan === undefined) {
    const fields = type.fieldsArray.map((f) => f.resolve());
    const isMessage = (f: Field) => f.resolvedType instanceof Type;
    plan = {
      defaults: fields
        .filter((f) => !f.repeated && !f.map && !f.hasPresence && !isMessage(f))
        .map((f) => [f.name, zeroOf(f)] as const),
      messages: fields.filter(isMessage).map((f) => ({
        name: f.name,
        mode: f.map ? ('map' as const) : f.repeated ? ('repeated' as const) : ('single' as const),
        type: f.resolvedType as Type,
      })),
    };
    plans.set(type, plan);
  }
  return plan;
}

/** Fills implicit-presence scalar defaults at every depth. */
function complete(type: Type, object: Record<string, unknown>): void {
  const plan = planOf(type);
  for (const [name, zero] of plan.defaults) if (object[name] === undefined) object[name] = zero();
  for (const field of plan.messages) {
    const value = object[field.name];
    if (value === undefined || value === null) continue;
    if (field.mode === 'single') {
      complete(field.type, value as Record<string, unknown>);
    } else {
      const items = field.mode === 'map' ? Object.values(value) : (value as unknown[]);
      for (const item of items) complete(field.type, item as Record<string, unknown>);
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
    complete(this.type, object);
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
    complete(this.type, object);
    return object as T;
  }
}

/**
 * A decoded protobufjs message in the representation generated code declares (the codegen
 * README's table): 64-bit integers as decimal strings, enums as numbers, bytes as plain
 * `Uint8Array`s (never a Node `Buffer`), implicit-presence scalars filled with their zero value,
 * unset message fields and fields with presence absent, lists and maps always there.
 *
 * protobufjs' own `toObject` gets most of the way (`longs: String`, `defaults: false` keeps
 * presence); what it leaves is filled here from the type's fields, at every depth.
 */

/** The part of a protobufjs Field this reads. */
export interface PlainField {
  readonly name: string;
  readonly type: string;
  readonly repeated: boolean;
  readonly map?: boolean;
  readonly resolvedType: unknown;
  readonly hasPresence?: boolean;
  readonly partOf?: unknown;
  readonly declaringField?: unknown;
  resolve?(): unknown;
}

/** The part of a protobufjs Type this reads. */
export interface PlainType {
  readonly fieldsArray: readonly PlainField[];
  toObject(message: object, options: object): { [key: string]: unknown };
}

const TO_OBJECT = {
  longs: String,
  enums: Number,
  defaults: false,
  arrays: true,
  objects: true,
  oneofs: true,
};

const LONG_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);

/** A resolved enum type (protobufjs `Enum` has `values`, a `Type` has `fields`). */
function isEnum(t: unknown): boolean {
  return typeof t === 'object' && t !== null && 'values' in t && !('fields' in t);
}

function isMessageType(t: unknown): t is PlainType {
  return typeof t === 'object' && t !== null && 'fieldsArray' in t;
}

/** The zero value of an implicit-presence scalar in the generated representation. */
function zeroOf(field: PlainField): unknown {
  if (isEnum(field.resolvedType)) return 0;
  if (LONG_TYPES.has(field.type)) return '0';
  switch (field.type) {
    case 'string':
      return '';
    case 'bool':
      return false;
    case 'bytes':
      return new Uint8Array(0);
    default:
      return 0;
  }
}

/** A plain `Uint8Array` over the same memory when `bytes` is a subclass (a Node `Buffer`). */
function plainBytes(bytes: unknown): unknown {
  if (!(bytes instanceof Uint8Array) || bytes.constructor === Uint8Array) return bytes;
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** `message` (decoded by `type`) as a plain object in the generated representation. */
export function plainMessage(type: PlainType, message: object): { [key: string]: unknown } {
  const object = type.toObject(message, TO_OBJECT);
  complete(type, object);
  return object;
}

function complete(type: PlainType, object: { [key: string]: unknown }): void {
  for (const field of type.fieldsArray) {
    field.resolve?.();
    const value = object[field.name];
    const sub = field.resolvedType;
    if (value === undefined || value === null) {
      const single = !field.repeated && !field.map && !isMessageType(sub);
      const implicit = field.hasPresence !== true && !field.partOf && !field.declaringField;
      if (single && implicit) object[field.name] = zeroOf(field);
      continue;
    }
    if (field.type === 'bytes') {
      if (field.map) {
        const map = value as { [key: string]: unknown };
        for (const k of Object.keys(map)) map[k] = plainBytes(map[k]);
      } else if (field.repeated) object[field.name] = (value as unknown[]).map(plainBytes);
      else object[field.name] = plainBytes(value);
    } else if (isMessageType(sub)) {
      const items = field.map
        ? Object.values(value as object)
        : field.repeated
          ? (value as unknown[])
          : [value];
      for (const item of items) complete(sub, item as { [key: string]: unknown });
    }
  }
}

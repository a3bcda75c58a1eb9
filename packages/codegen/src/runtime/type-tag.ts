/**
 * The type-name tag of the serialization contract (docs/contracts.md, `TYPE_NAME`): a
 * non-enumerable `Symbol.for('granary.typeName')` property. The symbol is global, so tagging
 * here is the same as `withTypeName` in @granary/core without importing it at run time.
 */
export const TYPE_NAME_TAG: unique symbol = Symbol.for('granary.typeName') as never;

/** Tags `value` so the serialization registry sends it as the protobuf type `typeName`. */
export function tagTypeName<T extends object>(typeName: string, value: T): T {
  Object.defineProperty(value, TYPE_NAME_TAG, {
    value: typeName,
    enumerable: false,
    configurable: true,
  });
  return value;
}

/**
 * The protobuf type name of `value`: its tag, else the `$type` of a protobufjs message (what a
 * deserializer may hand over), else undefined.
 */
export function typeNameOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const tag = (value as { [TYPE_NAME_TAG]?: unknown })[TYPE_NAME_TAG];
  if (typeof tag === 'string') return tag;
  const type = (value as { $type?: { fullName?: unknown } }).$type;
  if (type !== undefined && typeof type.fullName === 'string') {
    return type.fullName.startsWith('.') ? type.fullName.slice(1) : type.fullName;
  }
  return undefined;
}

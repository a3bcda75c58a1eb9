/**
 * protobufjs decodes a field by the reader's own idea of its type and ignores the wire type on
 * the tag, so bytes written by an incompatible schema (a field that changed from string to int64)
 * can decode into a wrong message without an error. This walks the encoded message first and
 * throws when a known field arrives with a wire type its declared type cannot have. Unknown
 * field numbers are fine: that is how removed fields look.
 */

/** The part of a protobufjs Field the check reads. */
export interface WireField {
  readonly name: string;
  readonly type: string;
  readonly repeated: boolean;
  readonly map?: boolean;
  readonly resolvedType: unknown;
}

/** The part of a protobufjs Type the check reads. */
export interface WireType {
  readonly fieldsById: { [id: number]: WireField };
}

const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;
const FIXED32 = 5;

const SCALAR_WIRE_TYPES: Record<string, number> = {
  int32: VARINT,
  int64: VARINT,
  uint32: VARINT,
  uint64: VARINT,
  sint32: VARINT,
  sint64: VARINT,
  bool: VARINT,
  fixed64: FIXED64,
  sfixed64: FIXED64,
  double: FIXED64,
  fixed32: FIXED32,
  sfixed32: FIXED32,
  float: FIXED32,
  string: LENGTH_DELIMITED,
  bytes: LENGTH_DELIMITED,
};

/** Throws an Error naming the field when `bytes` cannot have been written by `type`'s schema. */
export function checkWireTypes(type: WireType, bytes: Uint8Array, depth = 0): void {
  if (depth > 64) throw new Error('message nesting deeper than 64 levels');
  let pos = 0;
  const varint = (): number => {
    let value = 0;
    for (let shift = 0; shift < 64; shift += 7) {
      if (pos >= bytes.length) throw new Error('truncated varint');
      const b = bytes[pos++]!;
      if (shift < 49) value += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return value;
    }
    throw new Error('varint longer than 10 bytes');
  };
  const skip = (n: number): void => {
    if (pos + n > bytes.length) throw new Error('truncated field');
    pos += n;
  };
  while (pos < bytes.length) {
    const tag = varint();
    const id = Math.floor(tag / 8);
    const wire = tag % 8;
    const start = pos;
    if (wire === VARINT) varint();
    else if (wire === FIXED64) skip(8);
    else if (wire === FIXED32) skip(4);
    else if (wire === LENGTH_DELIMITED) skip(varint());
    else throw new Error(`unsupported wire type ${wire} for field number ${id}`);
    const field = type.fieldsById[id];
    if (!field) continue;
    const expected = expectedWireType(field);
    // Repeated scalars may be packed (one length-delimited run) or not.
    const packedOk = field.repeated && wire === LENGTH_DELIMITED && expected !== LENGTH_DELIMITED;
    if (wire !== expected && !packedOk) {
      throw new Error(
        `field ${field.name} (#${id}) has wire type ${wire}, its declared type ${field.type} needs ${expected}`,
      );
    }
    const nested = field.resolvedType as Partial<WireType> | null;
    if (wire === LENGTH_DELIMITED && !field.map && nested?.fieldsById) {
      const length = varintAt(bytes, start);
      checkWireTypes(
        nested as WireType,
        bytes.subarray(length.end, length.end + length.value),
        depth + 1,
      );
    }
  }
}

function expectedWireType(field: WireField): number {
  if (field.map) return LENGTH_DELIMITED;
  const scalar = SCALAR_WIRE_TYPES[field.type];
  if (scalar !== undefined) return scalar;
  // An enum is a varint; a message is length-delimited.
  const resolved = field.resolvedType as { values?: unknown } | null;
  return resolved && 'values' in resolved ? VARINT : LENGTH_DELIMITED;
}

function varintAt(bytes: Uint8Array, start: number): { value: number; end: number } {
  let value = 0;
  let pos = start;
  for (let shift = 0; ; shift += 7) {
    const b = bytes[pos++]!;
    value += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) return { value, end: pos };
  }
}

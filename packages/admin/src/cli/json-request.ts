import * as protobuf from 'protobufjs';

/** Inclusive bounds of the integer types, as BigInt (64-bit values pass JSON as strings). */
const INT_RANGES: Readonly<Record<string, readonly [bigint, bigint]>> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  sint32: [-(2n ** 31n), 2n ** 31n - 1n],
  sfixed32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  fixed32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  sint64: [-(2n ** 63n), 2n ** 63n - 1n],
  sfixed64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
  fixed64: [0n, 2n ** 64n - 1n],
};

/** A decimal integer as proto3's JSON writes one in a string. */
const INTEGER = /^-?(0|[1-9][0-9]*)$/;
/** A number in a string (proto3 JSON allows a float field as one). */
const NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;
/** Standard or URL-safe base64, padded or not (what proto3 JSON accepts for bytes). */
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/**
 * Rejects what protobufjs' `fromObject` would turn into another value without a word, so
 * `granary call` never sends a request other than the one written: a field the type does not
 * have, a value of the wrong JSON type (`"5"` → 5 is proto3 JSON, but `5` for a string became
 * `"5"`, `"false"` for a bool became `true`, `"abc"` for a double became NaN), an integer out of
 * its type's range or with a fraction (`1.5` for an int64 became 1), an enum name the enum does
 * not have, and a map key that is not of its key type. Rules: the proto3 JSON mapping, which
 * also names a field by its proto name (`device_ids`) as well as its JSON name (`deviceIds`):
 * returns the object with every field under the name protobufjs reads (lowerCamelCase).
 * `path` prefixes field names in the message (`a.b.`).
 */
export function checkJson(type: protobuf.Type, value: unknown, path = ''): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new Error(`${path ? path.slice(0, -1) : 'the request'} must be a JSON object`);
  }
  // No prototype: a field or map key named __proto__ stays a plain entry.
  const out = Object.create(null) as Record<string, unknown>;
  const seen = new Set<string>();
  for (const [key, v] of Object.entries(value)) {
    const field = fieldOf(type, key);
    if (field === undefined) throw new Error(`unknown field ${path}${key}`);
    if (seen.has(field.name)) throw new Error(`${path}${field.name} is given twice`);
    seen.add(field.name);
    if (v === null) continue; // proto3 JSON: the field's default
    field.resolve();
    const name = `${path}${key}`;
    if (field.map) {
      if (typeof v !== 'object' || Array.isArray(v)) throw new Error(`${name} must be an object`);
      const keyType = (field as unknown as protobuf.MapField).keyType;
      const entries = Object.create(null) as Record<string, unknown>;
      for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
        checkMapKey(keyType, k, name);
        entries[k] = checkValue(field, item, `${name}[${JSON.stringify(k)}]`);
      }
      out[field.name] = entries;
    } else if (field.repeated) {
      if (!Array.isArray(v)) throw new Error(`${name} must be an array`);
      out[field.name] = v.map((item, i) => checkValue(field, item, `${name}[${i}]`));
    } else out[field.name] = checkValue(field, v, name);
  }
  return out;
}

/** The field `key` names: its name in protobufjs, its json_name, or its proto name. */
function fieldOf(type: protobuf.Type, key: string): protobuf.Field | undefined {
  const camel = key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
  return (
    type.fields[key] ??
    type.fieldsArray.find((f) => f.options?.json_name === key) ??
    (camel !== key ? type.fields[camel] : undefined)
  );
}

/** One value of `field` (a list's item, a map's value, or the field's own), as fromObject reads it. */
function checkValue(field: protobuf.Field, v: unknown, name: string): unknown {
  const sub = field.resolvedType;
  if (sub instanceof protobuf.Type) {
    if (sub.fullName.startsWith('.google.protobuf.')) return v; // well-known types: JSON forms
    return checkJson(sub, v, `${name}.`);
  }
  if (sub instanceof protobuf.Enum) {
    if (typeof v === 'string' && Object.prototype.hasOwnProperty.call(sub.values, v)) return v;
    if (typeof v === 'number' && Number.isInteger(v) && inRange('int32', BigInt(v))) return v;
    const names = Object.keys(sub.values).join(', ');
    throw new Error(`${name} must be a value of ${sub.name} (${names}), not ${show(v)}`);
  }
  checkScalar(field.type, v, name);
  return v;
}

function checkScalar(type: string, v: unknown, name: string): void {
  switch (type) {
    case 'string':
      if (typeof v !== 'string') throw new Error(`${name} must be a string, not ${show(v)}`);
      return;
    case 'bool':
      if (typeof v !== 'boolean') throw new Error(`${name} must be true or false, not ${show(v)}`);
      return;
    case 'bytes':
      if (typeof v !== 'string' || !BASE64.test(v)) {
        throw new Error(`${name} must be base64 in a string, not ${show(v)}`);
      }
      return;
    case 'double':
    case 'float':
      if (typeof v === 'number') return;
      if (typeof v === 'string' && (NUMBER.test(v) || /^(NaN|-?Infinity)$/.test(v))) return;
      throw new Error(`${name} must be a number, not ${show(v)}`);
    default:
      checkInteger(type, v, name);
  }
}

function checkInteger(type: string, v: unknown, name: string): void {
  let n: bigint | undefined;
  if (typeof v === 'number' && Number.isSafeInteger(v)) n = BigInt(v);
  else if (typeof v === 'string' && INTEGER.test(v)) n = BigInt(v);
  if (n === undefined) {
    throw new Error(`${name} must be an integer (${type}; 64-bit ones as strings), not ${show(v)}`);
  }
  if (!inRange(type, n)) throw new Error(`${name} is out of range for ${type}: ${show(v)}`);
}

function checkMapKey(keyType: string, k: string, name: string): void {
  if (keyType === 'string') return;
  if (keyType === 'bool') {
    if (k !== 'true' && k !== 'false') throw new Error(`${name} key ${show(k)} is not a bool`);
    return;
  }
  if (!INTEGER.test(k) || !inRange(keyType, BigInt(k))) {
    throw new Error(`${name} key ${show(k)} is not a ${keyType}`);
  }
}

function inRange(type: string, n: bigint): boolean {
  const r = INT_RANGES[type];
  return r !== undefined && n >= r[0] && n <= r[1];
}

function show(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}

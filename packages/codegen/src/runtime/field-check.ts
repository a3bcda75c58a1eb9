import { InvalidArgumentError } from '@granary/core';
import { Enum, Type } from 'protobufjs';
import type { Field, MapField } from 'protobufjs';

/*
 * A message passed in (a client request, a grain's response, `encode`, `create`) is checked
 * against its fields' JavaScript types before protobufjs's `fromObject` sees it: that coerces
 * instead of refusing ('two' in an int32 became 0, 5 in a string '5', 'yes' in a bool true, an
 * unknown enum name 0) or throws a bare TypeError. TypeScript catches these at compile time;
 * JavaScript callers and objects built from JSON do not. 64-bit integers are long-check's.
 */

type Mode = 'single' | 'repeated' | 'map';
/** Why `value` does not fit, or undefined when it does. */
type Check = (value: unknown) => string | undefined;

interface FieldPlan {
  readonly name: string;
  readonly mode: Mode;
  /** The value's check, or the message type a value is checked against (none: 64-bit). */
  readonly check: Check | Type | undefined;
  /** A map's key check (keys are object keys, so strings); none for string and 64-bit keys. */
  readonly key?: Check;
  /** A proto2 `required` message or group: protobufjs cannot leave it out of the encoding. */
  readonly required?: true;
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
const UINT32_MAX = 2 ** 32 - 1;

const int = (min: number, max: number, what: string): Check => {
  const need = `${what} (an integer from ${min} to ${max})`;
  return (v) =>
    Number.isInteger(v) && (v as number) >= min && (v as number) <= max ? undefined : need;
};
const INT32 = int(INT32_MIN, INT32_MAX, 'an int32');
const UINT32 = int(0, UINT32_MAX, 'a uint32');

/**
 * A map key of a 32-bit integer type: an object key is a string, and protobufjs wrote any
 * string as some number ('x' and '1.5' as 0 and 1, 2^40 wrapped, '01' beside '1' as two
 * entries of key 1), so only the integer's own decimal form in range is taken.
 */
const intKey = (min: number, max: number, what: string): Check => {
  const need = `${what} key (the decimal form of an integer from ${min} to ${max})`;
  return (k) => {
    const n = Number(k);
    return Number.isInteger(n) && n >= min && n <= max && String(n) === k ? undefined : need;
  };
};

/** The check of each map key type but string and the 64-bit ones (long-check's). */
const KEYS: Readonly<Record<string, Check>> = {
  int32: intKey(INT32_MIN, INT32_MAX, 'an int32'),
  sint32: intKey(INT32_MIN, INT32_MAX, 'an int32'),
  sfixed32: intKey(INT32_MIN, INT32_MAX, 'an int32'),
  uint32: intKey(0, UINT32_MAX, 'a uint32'),
  fixed32: intKey(0, UINT32_MAX, 'a uint32'),
  // protobufjs wrote every key but 'true' as false ('yes', '1').
  bool: (k) => (k === 'true' || k === 'false' ? undefined : "a bool key ('true' or 'false')"),
};

/** The check of each scalar type; 64-bit types are left to long-check (undefined here). */
const SCALARS: Readonly<Record<string, Check>> = {
  int32: INT32,
  sint32: INT32,
  sfixed32: INT32,
  uint32: UINT32,
  fixed32: UINT32,
  double: (v) => (typeof v === 'number' ? undefined : 'a number'),
  float: (v) => (typeof v === 'number' ? undefined : 'a number'),
  bool: (v) => (typeof v === 'boolean' ? undefined : 'a boolean'),
  string: (v) => (typeof v === 'string' ? undefined : 'a string'),
  // protobufjs also reads base64 text and arrays of byte values.
  bytes: (v) =>
    v instanceof Uint8Array || typeof v === 'string' || Array.isArray(v)
      ? undefined
      : 'bytes (a Uint8Array)',
};

/** A oneof of two members or more (a proto3 `optional` is a oneof of one). */
interface OneofPlan {
  readonly name: string;
  readonly members: readonly string[];
}

interface TypePlan {
  readonly fields: readonly FieldPlan[];
  readonly oneofs: readonly OneofPlan[];
}

let plans = new WeakMap<Type, TypePlan>();

/** Forgets every plan (an extension loaded later adds fields to a planned type). */
export function resetFieldPlans(): void {
  plans = new WeakMap();
}

/**
 * Throws InvalidArgumentError naming the field (`pkg.Msg.items[2].qty`) whose value is not of
 * its field's type: a wrong scalar, an unknown enum name, a list or map or message that is not
 * one, two members of one oneof set. Absent fields (undefined, null) pass.
 */
export function checkFields(type: Type, value: unknown, path: string): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw refused(path, `a ${type.name} message (an object)`, value);
  }
  const object = value as Record<string, unknown>;
  const plan = plans.get(type) ?? planOf(type);
  for (const field of plan.fields) {
    const v = object[field.name];
    const at = `${path}.${field.name}`;
    if (v === undefined || v === null) {
      // protobufjs threw a bare TypeError reading its fields; every other protobuf library
      // refuses to encode a message missing a required field.
      if (field.required === true && field.check instanceof Type) {
        throw new InvalidArgumentError(at, `must be set (a required ${field.check.name} message)`);
      }
      continue;
    }
    if (field.mode === 'single') checkValue(field.check, v, at);
    else if (field.mode === 'repeated') {
      if (!Array.isArray(v)) throw refused(at, 'a list (an array)', v);
      v.forEach((x, i) => checkValue(field.check, x, `${at}[${i}]`));
    } else {
      if (typeof v !== 'object' || Array.isArray(v)) throw refused(at, 'a map (an object)', v);
      for (const [k, x] of Object.entries(v)) {
        const need = field.key?.(k);
        if (need !== undefined) throw refused(`${at} key ${k}`, need, k);
        checkValue(field.check, x, `${at}[${k}]`);
      }
    }
  }
  for (const oneof of plan.oneofs) {
    // protobufjs wrote every member set, and a reader keeps the one of the highest number.
    const set = oneof.members.filter((m) => object[m] !== undefined && object[m] !== null);
    if (set.length > 1) {
      throw new InvalidArgumentError(
        `${path}.${oneof.name}`,
        `a oneof takes one member at most, got ${set.join(' and ')}`,
      );
    }
  }
}

function checkValue(check: Check | Type | undefined, value: unknown, path: string): void {
  if (check === undefined) return;
  if (check instanceof Type) {
    checkFields(check, value, path);
    return;
  }
  const need = check(value);
  if (need !== undefined) throw refused(path, need, value);
}

function refused(path: string, need: string, value: unknown): InvalidArgumentError {
  const shown = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return new InvalidArgumentError(path, `must be ${need}, got ${shown} (${typeof value})`);
}

function planOf(type: Type): TypePlan {
  const fields: FieldPlan[] = [];
  for (const field of type.fieldsArray.map((f) => f.resolve())) {
    const check = checkOf(field);
    const key = field.map ? KEYS[(field as unknown as MapField).keyType] : undefined;
    if (check === undefined && key === undefined) continue;
    const mode: Mode = field.map ? 'map' : field.repeated ? 'repeated' : 'single';
    const plan: FieldPlan = { name: field.name, mode, check };
    if (key !== undefined) fields.push({ ...plan, key });
    else if (field.required && check instanceof Type) fields.push({ ...plan, required: true });
    else fields.push(plan);
  }
  const oneofs = type.oneofsArray
    .filter((o) => o.oneof.length > 1)
    .map((o) => ({ name: o.name, members: o.oneof }));
  const plan = { fields, oneofs };
  plans.set(type, plan); // a message type is checked when a value of it is reached
  return plan;
}

function checkOf(field: Field): Check | Type | undefined {
  const resolved = field.resolvedType;
  if (resolved instanceof Type) return resolved;
  if (resolved instanceof Enum) {
    const values = resolved.values;
    const names = Object.keys(values).join(', ');
    return (v) =>
      (typeof v === 'number' && Number.isInteger(v)) ||
      (typeof v === 'string' && Object.prototype.hasOwnProperty.call(values, v))
        ? undefined
        : `a ${resolved.name} value (a number, or one of ${names})`;
  }
  return SCALARS[field.type];
}

import { InvalidArgumentError } from '@granary/core';
import { Enum, Type } from 'protobufjs';
import type { Field } from 'protobufjs';

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
  /** The value's check, or the message type a value is checked against. */
  readonly check: Check | Type;
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

let plans = new WeakMap<Type, readonly FieldPlan[]>();

/** Forgets every plan (an extension loaded later adds fields to a planned type). */
export function resetFieldPlans(): void {
  plans = new WeakMap();
}

/**
 * Throws InvalidArgumentError naming the field (`pkg.Msg.items[2].qty`) whose value is not of
 * its field's type: a wrong scalar, an unknown enum name, a list or map or message that is not
 * one. Absent fields (undefined, null) pass.
 */
export function checkFields(type: Type, value: unknown, path: string): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw refused(path, `a ${type.name} message (an object)`, value);
  }
  const object = value as Record<string, unknown>;
  for (const field of plans.get(type) ?? planOf(type)) {
    const v = object[field.name];
    if (v === undefined || v === null) continue;
    const at = `${path}.${field.name}`;
    if (field.mode === 'single') checkValue(field.check, v, at);
    else if (field.mode === 'repeated') {
      if (!Array.isArray(v)) throw refused(at, 'a list (an array)', v);
      v.forEach((x, i) => checkValue(field.check, x, `${at}[${i}]`));
    } else {
      if (typeof v !== 'object' || Array.isArray(v)) throw refused(at, 'a map (an object)', v);
      for (const [k, x] of Object.entries(v)) checkValue(field.check, x, `${at}[${k}]`);
    }
  }
}

function checkValue(check: Check | Type, value: unknown, path: string): void {
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

function planOf(type: Type): readonly FieldPlan[] {
  const plan: FieldPlan[] = [];
  for (const field of type.fieldsArray.map((f) => f.resolve())) {
    const check = checkOf(field);
    if (check === undefined) continue;
    const mode: Mode = field.map ? 'map' : field.repeated ? 'repeated' : 'single';
    plan.push({ name: field.name, mode, check });
  }
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

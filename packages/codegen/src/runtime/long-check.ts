import { InvalidArgumentError } from '@granary/core';
import { Type } from 'protobufjs';
import type { Field, MapField } from 'protobufjs';

/*
 * 64-bit integers travel as decimal strings (README, "Representation"). protobufjs's
 * `fromObject` parses such a string with Long.fromString, which reads "abc" or "null" as 0,
 * "1e3" as 1 and wraps "-5" and 2^64 into other numbers: a wrong value on the wire, silently.
 * Values are checked here before protobufjs sees them, at every depth.
 */

/** The 64-bit scalar types, true for the unsigned ones. */
const LONG_TYPES: Readonly<Record<string, boolean>> = {
  int64: false,
  sint64: false,
  sfixed64: false,
  uint64: true,
  fixed64: true,
};
const DECIMAL = /^-?[0-9]+$/;
/** Decimal strings shorter than this fit every 64-bit type (18 digits < 2^63): no BigInt. */
const ALWAYS_FITS_LENGTH = 19;
const MAX_UNSIGNED = (1n << 64n) - 1n;
const MIN_SIGNED = -(1n << 63n);
const MAX_SIGNED = (1n << 63n) - 1n;

type Mode = 'single' | 'repeated' | 'map';

interface LongPlan {
  readonly longs: readonly { name: string; mode: Mode; unsigned: boolean }[];
  /** Maps keyed by a 64-bit type (keys are strings in the object). */
  readonly keys: readonly { name: string; unsigned: boolean }[];
  /** Message fields whose type may hold a 64-bit integer somewhere below. */
  readonly messages: readonly { name: string; mode: Mode; type: Type }[];
}

/** null: the type holds no 64-bit integer at any depth, nothing to check. */
let plans = new WeakMap<Type, LongPlan | null>();

/** Forgets every plan (an extension loaded later may add a 64-bit field to a planned type). */
export function resetLongPlans(): void {
  plans = new WeakMap();
}

/**
 * Throws InvalidArgumentError naming the field (`pkg.Msg.items[2].count`) when a 64-bit field of
 * `object` holds anything but a decimal string in its type's range, a safe integer number or a
 * Long.
 */
export function checkLongs(type: Type, object: Record<string, unknown>, path: string): void {
  // Planned once per type: an encode on the call path pays one WeakMap lookup.
  const cached = plans.get(type);
  const plan = cached !== undefined ? cached : planOf(type, new Set());
  if (plan === null) return;
  for (const { name, mode, unsigned } of plan.longs) {
    const value = object[name];
    if (value === undefined || value === null) continue;
    if (mode === 'single') checkLong(value, unsigned, `${path}.${name}`);
    else if (mode === 'repeated' && Array.isArray(value)) {
      value.forEach((v, i) => checkLong(v, unsigned, `${path}.${name}[${i}]`));
    } else if (mode === 'map' && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) checkLong(v, unsigned, `${path}.${name}[${k}]`);
    }
  }
  for (const { name, unsigned } of plan.keys) {
    const value = object[name];
    if (typeof value !== 'object' || value === null) continue;
    for (const k of Object.keys(value)) checkLong(k, unsigned, `${path}.${name} key ${k}`);
  }
  for (const { name, mode, type: inner } of plan.messages) {
    const value = object[name];
    if (typeof value !== 'object' || value === null) continue;
    if (mode === 'single') checkLongs(inner, value as Record<string, unknown>, `${path}.${name}`);
    else if (mode === 'repeated' && Array.isArray(value)) {
      value.forEach((v, i) => checkMessage(inner, v, `${path}.${name}[${i}]`));
    } else if (mode === 'map') {
      for (const [k, v] of Object.entries(value)) checkMessage(inner, v, `${path}.${name}[${k}]`);
    }
  }
}

function checkMessage(type: Type, value: unknown, path: string): void {
  if (typeof value === 'object' && value !== null) {
    checkLongs(type, value as Record<string, unknown>, path);
  }
}

function checkLong(value: unknown, unsigned: boolean, path: string): void {
  if (typeof value === 'string') {
    if (DECIMAL.test(value) && !(unsigned && value.startsWith('-'))) {
      if (value.length < ALWAYS_FITS_LENGTH) return;
      const n = BigInt(value);
      if (unsigned ? n <= MAX_UNSIGNED : n >= MIN_SIGNED && n <= MAX_SIGNED) return;
    }
  } else if (typeof value === 'number') {
    if (Number.isSafeInteger(value) && !(unsigned && value < 0)) return;
  } else if (isLong(value)) {
    return;
  }
  const shown = typeof value === 'string' ? JSON.stringify(value) : String(value);
  throw new InvalidArgumentError(
    path,
    `must be ${unsigned ? 'a uint64' : 'an int64'} as a decimal string within its range ` +
      `(e.g. '42'), got ${shown} (${typeof value})`,
  );
}

/** A protobufjs Long (a message a registry decoded, or built by hand). */
function isLong(value: unknown): boolean {
  const v = value as { low?: unknown; high?: unknown } | null;
  return (
    typeof v === 'object' && v !== null && typeof v.low === 'number' && typeof v.high === 'number'
  );
}

/**
 * The plan of `type`; `visiting` holds the types being planned above it, so a recursive type
 * (a tree node holding nodes) is descended into without planning it twice.
 */
function planOf(type: Type, visiting: Set<Type>): LongPlan | null {
  const known = plans.get(type);
  if (known !== undefined) return known;
  visiting.add(type);
  const longs: { name: string; mode: Mode; unsigned: boolean }[] = [];
  const keys: { name: string; unsigned: boolean }[] = [];
  const messages: { name: string; mode: Mode; type: Type }[] = [];
  for (const field of type.fieldsArray.map((f) => f.resolve())) {
    const mode: Mode = field.map ? 'map' : field.repeated ? 'repeated' : 'single';
    const keyType = field.map ? (field as unknown as MapField).keyType : undefined;
    if (keyType !== undefined && keyType in LONG_TYPES) {
      keys.push({ name: field.name, unsigned: LONG_TYPES[keyType]! });
    }
    if (field.type in LONG_TYPES) {
      longs.push({ name: field.name, mode, unsigned: LONG_TYPES[field.type]! });
    } else if (field.resolvedType instanceof Type && mayHoldLongs(field, visiting)) {
      messages.push({ name: field.name, mode, type: field.resolvedType });
    }
  }
  visiting.delete(type);
  const plan =
    longs.length + keys.length + messages.length === 0 ? null : { longs, keys, messages };
  plans.set(type, plan);
  return plan;
}

/** A type still being planned above counts as holding some (checked when reached). */
function mayHoldLongs(field: Field, visiting: Set<Type>): boolean {
  const inner = field.resolvedType as Type;
  return visiting.has(inner) || planOf(inner, visiting) !== null;
}

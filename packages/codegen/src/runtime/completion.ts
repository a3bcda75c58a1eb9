import { Enum, Type } from 'protobufjs';
import type { Field } from 'protobufjs';

/*
 * Filling in what protobuf leaves off the wire: after protobufjs's `toObject` with
 * `defaults: false` (which keeps presence), implicit-presence proto3 scalars get their zero
 * value and proto2 fields with `[default = ...]` their default, at every depth. Bytes come back
 * as plain `Uint8Array` views (protobufjs reads them as Node `Buffer`s, whose JSON, equality and
 * `toString` differ from the `Uint8Array` the interfaces declare).
 */

type Mode = 'single' | 'repeated' | 'map';

/** Per message type: scalars to default when absent, and message fields to descend into. */
interface CompletionPlan {
  /** `explicit`: a proto2 `[default]`, which encode must not write back when still unchanged. */
  readonly defaults: readonly (readonly [name: string, value: () => unknown, explicit: boolean])[];
  readonly bytes: readonly { readonly name: string; readonly mode: Mode }[];
  readonly messages: readonly {
    readonly name: string;
    readonly mode: Mode;
    readonly type: Type;
  }[];
}

let plans = new WeakMap<Type, CompletionPlan>();

/**
 * Per message type: whether it or a message type it can hold has a proto2 `[default]` (only
 * those objects may hold a filled-in default that encode has to leave out).
 */
let withDefaults = new WeakMap<Type, boolean>();

/**
 * The proto2 defaults `complete` filled into each object, by field name, as filled. protoc and
 * every other implementation leave a field with an explicit default off the wire unless it was
 * set: a decoded message encoded again must give the same bytes, so encode leaves out a field
 * whose value is still the one filled in. A WeakMap, not a property: the object keeps the
 * documented shape (the default is there to read, spread and compare).
 */
const filled = new WeakMap<object, Map<string, unknown>>();

/**
 * Forgets every plan: an extension added to the shared root later (another generated module
 * loading) may add a message field to a type whose plan was already made.
 */
export function resetCompletionPlans(): void {
  plans = new WeakMap();
  withDefaults = new WeakMap();
}

const LONG_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);

/** The zero value of an implicit-presence scalar in the documented representation. */
function zeroOf(field: Field): () => unknown {
  if (field.resolvedType instanceof Enum) return () => 0;
  if (LONG_TYPES.has(field.type)) return () => '0';
  switch (field.type) {
    case 'string':
      return () => '';
    case 'bool':
      return () => false;
    case 'bytes':
      return () => new Uint8Array(0);
    default:
      return () => 0;
  }
}

/**
 * A proto2 `[default = ...]` in the documented representation. The embedded descriptor holds
 * it normalized (64-bit as a decimal string, bytes as base64, enums by name, which protobufjs
 * resolved into `typeDefault`).
 */
function explicitDefaultOf(field: Field, value: unknown): () => unknown {
  if (field.resolvedType instanceof Enum) {
    const number = field.typeDefault as number;
    return () => number;
  }
  if (LONG_TYPES.has(field.type)) {
    const text = String(value);
    return () => text;
  }
  if (field.type === 'bytes') {
    const bytes = Buffer.from(String(value), 'base64');
    return () => new Uint8Array(bytes);
  }
  return () => value;
}

/**
 * The default to fill for `field`, or undefined when an absent value stays absent (lists, maps,
 * messages, fields with presence, and extensions: an extension is there only when set).
 */
function fillerOf(field: Field): (() => unknown) | undefined {
  if (field.repeated || field.map || field.resolvedType instanceof Type) return undefined;
  if (field.declaringField !== null) return undefined;
  const explicit = (field.options as Record<string, unknown> | undefined)?.default;
  if (explicit !== undefined && field.partOf === null) return explicitDefaultOf(field, explicit);
  return field.hasPresence ? undefined : zeroOf(field);
}

/** Whether `fillerOf(field)` is an implicit-presence zero, which protobufjs never writes. */
function zeroFilled(field: Field): boolean {
  const explicit = (field.options as Record<string, unknown> | undefined)?.default;
  return explicit === undefined || field.partOf !== null;
}

function planOf(type: Type): CompletionPlan {
  let plan = plans.get(type);
  if (plan === undefined) {
    const fields = type.fieldsArray.map((f) => f.resolve());
    const defaults: (readonly [string, () => unknown, boolean])[] = [];
    for (const field of fields) {
      const filler = fillerOf(field);
      if (filler !== undefined) defaults.push([field.name, filler, !zeroFilled(field)]);
    }
    const modeOf = (f: Field): Mode => (f.map ? 'map' : f.repeated ? 'repeated' : 'single');
    plan = {
      defaults,
      bytes: fields
        .filter((f) => f.type === 'bytes')
        .map((f) => ({ name: f.name, mode: modeOf(f) })),
      messages: fields
        .filter((f) => f.resolvedType instanceof Type)
        .map((f) => ({ name: f.name, mode: modeOf(f), type: f.resolvedType as Type })),
    };
    plans.set(type, plan);
  }
  return plan;
}

/** Fills implicit-presence scalar zeros and proto2 defaults of `object` at every depth. */
export function complete(type: Type, object: Record<string, unknown>): void {
  const plan = planOf(type);
  for (const [name, fill, explicit] of plan.defaults) {
    if (object[name] !== undefined) continue;
    const value = fill();
    object[name] = value;
    if (explicit) {
      const names = filled.get(object);
      if (names === undefined) filled.set(object, new Map([[name, value]]));
      else names.set(name, value);
    }
  }
  for (const { name, mode } of plan.bytes) {
    const value = object[name];
    if (value === undefined || value === null) continue;
    if (mode === 'single') object[name] = plain(value as Uint8Array);
    else if (mode === 'repeated') object[name] = (value as Uint8Array[]).map(plain);
    else
      for (const [k, v] of Object.entries(value))
        (value as Record<string, unknown>)[k] = plain(v as Uint8Array);
  }
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

/**
 * `object` without the proto2 defaults `complete` filled into it (at any depth) that still hold
 * the value filled in, so they stay off the wire; `object` itself when there are none. Copies
 * only the objects it changes.
 */
export function withoutFilledDefaults(
  type: Type,
  object: Record<string, unknown>,
): Record<string, unknown> {
  if (!holdsDefaults(type)) return object;
  let copy = object;
  const own = filled.get(object);
  if (own !== undefined) {
    for (const [name, value] of own) {
      if (!Object.is(object[name], value)) continue;
      if (copy === object) copy = { ...object };
      delete copy[name];
    }
  }
  for (const field of planOf(type).messages) {
    const value = object[field.name];
    if (value === undefined || value === null || !holdsDefaults(field.type)) continue;
    const stripped = stripValue(field.type, field.mode, value);
    if (stripped === value) continue;
    if (copy === object) copy = { ...object };
    copy[field.name] = stripped;
  }
  return copy;
}

function stripValue(type: Type, mode: Mode, value: unknown): unknown {
  if (mode === 'single') return withoutFilledDefaults(type, value as Record<string, unknown>);
  if (mode === 'repeated') {
    const items = value as Record<string, unknown>[];
    const stripped = items.map((item) => withoutFilledDefaults(type, item));
    return stripped.some((item, i) => item !== items[i]) ? stripped : value;
  }
  const entries = Object.entries(value as Record<string, Record<string, unknown>>);
  const stripped = entries.map(([k, v]) => [k, withoutFilledDefaults(type, v)] as const);
  return stripped.some(([, v], i) => v !== entries[i]?.[1]) ? Object.fromEntries(stripped) : value;
}

/** Whether `type`, or a message type reachable from its fields, has a proto2 `[default]`. */
function holdsDefaults(type: Type): boolean {
  let answer = withDefaults.get(type);
  if (answer === undefined) {
    // Every type reachable from here, once (messages may be recursive).
    const seen = new Set<Type>([type]);
    const queue = [type];
    answer = false;
    for (let t = queue.pop(); t !== undefined; t = queue.pop()) {
      const plan = planOf(t);
      if (plan.defaults.some(([, , explicit]) => explicit)) answer = true;
      for (const field of plan.messages) {
        if (!seen.has(field.type)) {
          seen.add(field.type);
          queue.push(field.type);
        }
      }
    }
    withDefaults.set(type, answer);
  }
  return answer;
}

/** A plain `Uint8Array` over the same memory (no copy) when `bytes` is a subclass (`Buffer`). */
function plain(bytes: Uint8Array): Uint8Array {
  return bytes.constructor === Uint8Array
    ? bytes
    : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

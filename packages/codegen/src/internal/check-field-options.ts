import { Enum, Type } from 'protobufjs';
import type { Field } from 'protobufjs';
import { SCALAR_TYPES } from '../model/model';
import { INTEGER_RANGES, integerTokenValue, rawDefaultToken } from './raw-option-values';

/*
 * `[default = ...]` and `[packed = ...]` as protoc checks them. protobufjs's parser reads a
 * default as whatever literal is written (a number for a bool or a string field, a name no enum
 * value has, 2^31 for an int32), and the module would then embed a default that is not of the
 * field's type or that the wire cannot carry.
 */

/** The range of each 32-bit integer type (64-bit defaults are checked with the defaults). */
const INT_RANGES: Record<string, [number, number]> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  sint32: [-(2 ** 31), 2 ** 31 - 1],
  sfixed32: [-(2 ** 31), 2 ** 31 - 1],
  uint32: [0, 2 ** 32 - 1],
  fixed32: [0, 2 ** 32 - 1],
};

/**
 * Types a `[packed = true]` list may have, besides enums: the varint and fixed-width scalars
 * (every scalar but the length-delimited string and bytes).
 */
const PACKABLE: ReadonlySet<string> = new Set(
  SCALAR_TYPES.filter((t) => t !== 'string' && t !== 'bytes'),
);

/**
 * What protoc refuses in the `[default]`, `[packed]`, `[lazy]` and `[json_name]` of field `f`
 * (resolved), or in its label as an extension, if anything.
 */
export function fieldOptionProblem(f: Field): string | undefined {
  const options = (f.options ?? {}) as Record<string, unknown>;
  if (optionOf(f, 'packed') === true && !(f.repeated && isPackable(f))) {
    return '[packed = true] can only be specified for repeated primitive fields';
  }
  for (const lazy of ['lazy', 'unverified_lazy']) {
    // A map field is a list of entry messages: protoc takes [lazy] on it, whatever its values.
    if (optionOf(f, lazy) === true && !(f.resolvedType instanceof Type || f.map)) {
      return `[${lazy} = true] can only be specified for submessage fields`;
    }
  }
  if (f.extend !== undefined) {
    if (f.required) return `the extension ${f.name} cannot be required`;
    if (optionOf(f, 'json_name') !== undefined) {
      return 'option json_name is not allowed on extension fields';
    }
  }
  if (!('default' in options)) return undefined;
  if (f.repeated || f.map) return "repeated fields can't have default values";
  return defaultProblem(f, options.default);
}

/**
 * An integer [default] past 2^53, as written: exact in a 64-bit field's range (protoc: "Integer
 * out of range" past it, "Unsigned field can't have negative default value"), a double or float
 * takes it, anything else refuses it as it refuses a smaller number.
 */
function rawDefaultProblem(f: Field, raw: string): string | undefined {
  if (f.type === 'double' || f.type === 'float') return undefined;
  const range = f.type.endsWith('64') ? INTEGER_RANGES[f.type] : undefined;
  if (range === undefined || f.resolvedType !== null) return defaultProblem(f, Number(raw));
  const value = integerTokenValue(raw);
  if (value < 0n && range[0] === 0n) return "unsigned field can't have negative default value";
  return value < range[0] || value > range[1]
    ? `[default] ${raw} is out of range for ${f.type} (${range[0]} to ${range[1]})`
    : undefined;
}

/**
 * Option `name` of `f` as written: protobufjs drops `options` of a message field once resolved
 * (its features take over), and keeps what was written in `parsedOptions`.
 */
function optionOf(f: Field, name: string): unknown {
  const options = (f.options ?? {}) as Record<string, unknown>;
  if (name in options) return options[name];
  const parsed = (f.parsedOptions ?? []) as Record<string, unknown>[];
  return parsed.find((o) => name in o)?.[name];
}

function isPackable(f: Field): boolean {
  return f.resolvedType instanceof Enum || (f.resolvedType === null && PACKABLE.has(f.type));
}

function defaultProblem(f: Field, written: unknown): string | undefined {
  const raw = rawDefaultToken(written);
  if (raw !== undefined) return rawDefaultProblem(f, raw);
  const value = written;
  const type = f.resolvedType;
  if (type instanceof Type) return "messages can't have default values";
  if (type instanceof Enum) {
    return typeof value === 'string' && value in type.values
      ? undefined
      : `enum ${type.fullName.slice(1)} has no value named ${String(value)} (the [default])`;
  }
  if (f.type === 'bool') {
    return typeof value === 'boolean' ? undefined : '[default] of a bool must be true or false';
  }
  if (f.type === 'string' || f.type === 'bytes') {
    return typeof value === 'string' ? undefined : `[default] of a ${f.type} must be a string`;
  }
  if (typeof value !== 'number') return `[default] of a ${f.type} must be a number`;
  const range = INT_RANGES[f.type];
  if (range !== undefined && (value < range[0] || value > range[1])) {
    return `[default] ${value} is out of range for ${f.type} (${range[0]} to ${range[1]})`;
  }
  return undefined;
}

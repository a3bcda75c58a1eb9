import { randomBytes } from 'node:crypto';
import { Enum, Type } from 'protobufjs';
import type { Field } from 'protobufjs';
import { rewriteCode } from './proto-source';

/*
 * A custom option's plain value (`[(my.limit) = 2147483648]`, `option (ratio) = inf;`) as protoc
 * reads it. protobufjs turns the token into a JavaScript number first: 2^31 or -1 in an int32
 * or uint32 option, 08, 2^64 or 1e3 in an integer one, and 2^63 beside 2^63-1 (one double) all
 * looked valid. So before parsing, each such token is replaced by a string literal standing in
 * for it, and the check reads the token as written, with protoc's rules for the option's type.
 */

/** Marks a stand-in; the nonce keeps a string a .proto really holds from passing for one. */
const PREFIX = `granary-raw-option:${randomBytes(6).toString('hex')}:`;

/** `(name)` or `(name).path`, then `=`: only an option assignment has this shape. */
const OPTION_NAME = /^\(\s*\.?[A-Za-z_][\w.]*\s*\)(?:\s*\.\s*[A-Za-z_]\w*)*\s*=\s*/;
/** A plain value that is not a string or an aggregate: a number or identifier, maybe negated. */
const PLAIN_VALUE = /^(?:-\s*)?(?:0[xX]\w*|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\w*|[A-Za-z_]\w*)/;

/**
 * `[default = N]` (after `[` or `,`: not a field named `default`) with an integer token, read
 * exactly only past 2^53 (below, protobufjs's number is exact and every check reads it).
 */
const DEFAULT_INTEGER = /^default\s*=\s*(-\s*)?(0[xX][0-9a-fA-F]+|\d+)(?![\w.])/;

/**
 * `source` with each custom option's plain value, and each integer `[default]` past 2^53 (a
 * 64-bit default protobufjs would read as a double), replaced by a stand-in string.
 */
export function captureRawOptionValues(source: string): string {
  if (!source.includes('(') && !source.includes('default')) return source;
  return rewriteCode(source, (i) => {
    if (source[i] === 'd') return rawDefault(source, i);
    if (source[i] !== '(') return undefined;
    const name = OPTION_NAME.exec(source.slice(i, i + 400));
    const value = name === null ? null : PLAIN_VALUE.exec(source.slice(i + name[0].length));
    if (name === null || value === null) return undefined;
    return {
      text: `${name[0]}"${PREFIX}${value[0].replace(/\s+/g, '')}"`,
      end: i + name[0].length + value[0].length,
    };
  });
}

/**
 * Integer [default] tokens past 2^53, by the number standing in for each. protobufjs reads a
 * default by its field's type (a string in an int64 default is a syntax error), so the stand-in
 * is a number: 2^100 + k * 2^48, exact as a double and never a token left in the source (every
 * integer past 2^53 is replaced).
 */
const rawDefaults = new Map<number, string>();

function rawDefault(source: string, i: number) {
  const match = DEFAULT_INTEGER.exec(source.slice(i, i + 200));
  if (match === null || !/[[,]\s*$/.test(source.slice(Math.max(0, i - 100), i))) return undefined;
  const token = `${match[1] === undefined ? '' : '-'}${match[2]}`;
  const value = integerTokenValue(token);
  if (value < 2n ** 53n && value > -(2n ** 53n)) return undefined;
  const standIn = 2n ** 100n + BigInt(rawDefaults.size) * 2n ** 48n;
  rawDefaults.set(Number(standIn), token);
  return { text: `default = ${standIn.toString()}`, end: i + match[0].length };
}

/** The integer token past 2^53 a [default] stood in for, or undefined when it is no stand-in. */
export function rawDefaultToken(value: unknown): string | undefined {
  return typeof value === 'number' ? rawDefaults.get(value) : undefined;
}

/** The value of an integer token as protoc reads it: decimal, `0x` hex or `0` octal. */
export function integerTokenValue(token: string): bigint {
  const negative = token.startsWith('-');
  const body = negative ? token.slice(1) : token;
  const magnitude = BigInt(/^0[0-7]+$/.test(body) ? `0o${body.slice(1)}` : body);
  return negative ? -magnitude : magnitude;
}

/** The token a stand-in replaced, or undefined when `value` is no stand-in. */
export function rawOptionValue(value: unknown): string | undefined {
  return typeof value === 'string' && value.startsWith(PREFIX)
    ? value.slice(PREFIX.length)
    : undefined;
}

const INTEGER = /^-?(?:0[xX][0-9a-fA-F]+|0[0-7]*|[1-9]\d*)$/;
const FLOAT = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
/** The range of each integer type, as protoc checks a value written for it. */
export const INTEGER_RANGES: Readonly<Record<string, readonly [bigint, bigint]>> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  sint32: [-(2n ** 31n), 2n ** 31n - 1n],
  sfixed32: [-(2n ** 31n), 2n ** 31n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  sint64: [-(2n ** 63n), 2n ** 63n - 1n],
  sfixed64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  fixed32: [0n, 2n ** 32n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
  fixed64: [0n, 2n ** 64n - 1n],
};

/**
 * What protoc says of `raw` as the value of option field `field` (`path` names the option), if
 * it refuses it: its parser's errors first (a `-` before a word, a literal past 64 bits, a
 * leading 0 that is not octal), then its check of the value against the type.
 */
export function rawValueProblem(field: Field, raw: string, path: string): string | undefined {
  const negative = raw.startsWith('-');
  const body = negative ? raw.slice(1) : raw;
  const word = /^[A-Za-z_]/.test(body);
  if (negative && word) return `${path}: invalid '-' symbol before identifier`;
  if (!word && /^0\d/.test(body) && !/^0[0-7]+$/.test(body)) {
    return `${path}: numbers starting with leading zero must be in octal`;
  }
  const integer = INTEGER.test(raw);
  if (!word && !integer && !FLOAT.test(raw)) return `${path}: ${raw} is not a number`;
  if (integer) {
    const magnitude = integerTokenValue(body);
    if (magnitude > (negative ? 2n ** 63n : 2n ** 64n - 1n)) return `${path}: integer out of range`;
  }
  const type = field.resolve().resolvedType;
  const kind = type instanceof Enum ? 'enum' : type instanceof Type ? 'message' : field.type;
  if (kind === 'message') {
    return `${path} is a message: set it whole with { <text format> } or a field with ${path.replace(/^option /, '')}.field = value`;
  }
  if (kind === 'enum') {
    if (!word) return `${path}: value must be an identifier for enum-valued option`;
    const values = (type as Enum).values;
    return Object.hasOwn(values, raw)
      ? undefined
      : `${path}: enum ${(type as Enum).fullName.slice(1)} has no value named ${raw}`;
  }
  if (kind === 'bool') {
    if (!word) return `${path}: value must be an identifier for boolean option`;
    return raw === 'true' || raw === 'false'
      ? undefined
      : `${path}: value must be "true" or "false" for boolean option`;
  }
  if (kind === 'string' || kind === 'bytes') {
    return `${path}: value must be a quoted string for ${kind} option`;
  }
  if (kind === 'float' || kind === 'double') {
    return word ? `${path}: value must be a number for ${kind} option` : undefined;
  }
  const range = INTEGER_RANGES[kind];
  if (range === undefined) return undefined;
  if (!integer) {
    const what = range[0] === 0n ? 'a non-negative integer' : 'an integer';
    return `${path}: value must be ${what} for ${kind} option`;
  }
  if (negative && range[0] === 0n) {
    return `${path}: value must be a non-negative integer for ${kind} option`;
  }
  const value = integerTokenValue(raw);
  return value < range[0] || value > range[1]
    ? `${path}: value out of range for ${kind} option`
    : undefined;
}

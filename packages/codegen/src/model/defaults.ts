import { UnsupportedProtoError } from '../errors';
import { unescapeC } from '../internal/c-escapes';
import type { DefaultValue, TypeRef } from './model';

/*
 * proto2 `[default = ...]` as both front ends read it, normalized to one `DefaultValue` so the
 * two commands embed the same bytes. protoc hands the default over as text (C-escaped for
 * bytes, decimal for integers, `inf`/`nan` for floats); protobufjs as the parsed JS value, or a
 * 64-bit integer past 2^53 as a decimal string read from its token. Where protobufjs cannot be
 * exact (non-ASCII bytes), both refuse the same way, so the two commands never disagree.
 */

const LONG_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const FLOAT_TYPES = new Set(['double', 'float']);
/** protoc's words for the float defaults `Number()` does not read. */
const NON_FINITE: Record<string, number> = { inf: Infinity, '-inf': -Infinity, nan: NaN };

/** `FieldDescriptorProto.default_value` (protoc's text form) → DefaultValue. */
export function defaultFromProtoc(text: string, type: TypeRef, where: string): DefaultValue {
  if (type.kind !== 'scalar') {
    if (type.kind === 'enum') return text;
    throw unsupported(where, 'a message field has no default');
  }
  switch (type.scalar) {
    case 'bool':
      return text === 'true';
    case 'string':
      return text;
    case 'bytes':
      return bytesDefault(unescapeC(text), where);
    default:
      if (FLOAT_TYPES.has(type.scalar)) return floatDefault(NON_FINITE[text] ?? Number(text));
      if (LONG_TYPES.has(type.scalar)) return BigInt(text).toString();
      return Number(text);
  }
}

/** A protobufjs `options.default` (parsed with keepCase) → DefaultValue. */
export function defaultFromProtobufjs(value: unknown, type: TypeRef, where: string): DefaultValue {
  if (type.kind !== 'scalar') {
    if (type.kind === 'enum') return String(value);
    throw unsupported(where, 'a message field has no default');
  }
  switch (type.scalar) {
    case 'bool':
      return value === true || value === 'true';
    case 'string':
      return String(value);
    case 'bytes': {
      const text = String(value);
      const bytes: number[] = [];
      for (let i = 0; i < text.length; i++) bytes.push(text.charCodeAt(i));
      return bytesDefault(bytes, where);
    }
    default: {
      const n = typeof value === 'number' ? value : Number(value);
      if (FLOAT_TYPES.has(type.scalar)) return floatDefault(n);
      if (LONG_TYPES.has(type.scalar)) {
        if (typeof value === 'string' && /^-?\d+$/.test(value)) return BigInt(value).toString();
        if (!Number.isSafeInteger(n)) throw tooLarge(where);
        return BigInt(n).toString();
      }
      return n;
    }
  }
}

function floatDefault(n: number): DefaultValue {
  if (Number.isNaN(n)) return 'nan';
  if (n === Infinity) return 'inf';
  if (n === -Infinity) return '-inf';
  return n === 0 ? 0 : n; // -0 → 0, as JSON writes it anyway
}

/** Bytes ≥ 0x80 are refused: protobufjs cannot tell `\xff` from a literal `ÿ` in the source. */
function bytesDefault(bytes: readonly number[], where: string): DefaultValue {
  if (bytes.some((b) => b > 0x7f)) {
    throw unsupported(where, 'a bytes default with bytes above 0x7f (use ASCII or no default)');
  }
  return Buffer.from(bytes).toString('base64');
}

function tooLarge(where: string): UnsupportedProtoError {
  return unsupported(where, 'a 64-bit default that is not an integer');
}

function unsupported(where: string, what: string): UnsupportedProtoError {
  return new UnsupportedProtoError(`[default] of ${where}: ${what} is not supported`);
}

import { ProtoParseError } from '../errors';

/*
 * protobufjs keeps fields, nested types, enum values and methods in plain objects, so a
 * declaration named `__proto__` sets the object's prototype instead of adding a member and is
 * silently lost. granary-codegen therefore renames that one identifier in the source before
 * protobufjs parses it, and renames it back in the model: both commands see the same names.
 */

/** The .proto identifier protobufjs cannot hold. */
const HOSTILE = '__proto__';
/** What it is parsed as; refused if a .proto uses it itself. */
const STAND_IN = '__granary_proto__';

/**
 * The source with every identifier `__proto__` (outside strings and comments) renamed to the
 * stand-in. Throws `ProtoParseError` when the source already uses the stand-in.
 */
export function escapeProtoSource(source: string, file: string): string {
  if (!source.includes(HOSTILE) && !source.includes(STAND_IN)) return source;
  let out = '';
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    const end = skipEnd(source, i);
    if (end > i) {
      out += source.slice(i, end);
      i = end;
    } else if (/[A-Za-z_]/.test(c)) {
      const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(i))?.[0] ?? c;
      if (word === STAND_IN) {
        throw new ProtoParseError(
          `${file} uses the identifier ${STAND_IN}, which granary-codegen reserves`,
        );
      }
      out += word === HOSTILE ? STAND_IN : word;
      i += word.length;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/**
 * `source` with code (not string literals or comments) rewritten where `at(i)` answers: its text
 * replaces `source` from `i` up to its `end`; elsewhere each character is kept.
 */
export function rewriteCode(
  source: string,
  at: (i: number) => { readonly text: string; readonly end: number } | undefined,
): string {
  let out = '';
  let i = 0;
  while (i < source.length) {
    const end = skipEnd(source, i);
    if (end > i) {
      out += source.slice(i, end);
      i = end;
      continue;
    }
    const replaced = at(i);
    if (replaced === undefined) {
      out += source[i++];
    } else {
      out += replaced.text;
      i = replaced.end;
    }
  }
  return out;
}

/** Where a string literal or comment starting at `i` ends (`i` when none starts there). */
export function skipEnd(source: string, i: number): number {
  const c = source[i];
  if (c === '"' || c === "'") {
    let j = i + 1;
    while (j < source.length && source[j] !== c && source[j] !== '\n')
      j += source[j] === '\\' ? 2 : 1;
    return j + 1;
  }
  if (c === '/' && source[i + 1] === '/') {
    const nl = source.indexOf('\n', i);
    return nl < 0 ? source.length : nl;
  }
  if (c === '/' && source[i + 1] === '*') {
    const close = source.indexOf('*/', i + 2);
    return close < 0 ? source.length : close + 2;
  }
  return i;
}

/** An identifier as protobufjs parsed it, back to its name in the .proto. */
export function unescapeIdentifier(name: string): string {
  return name === STAND_IN ? HOSTILE : name;
}

/**
 * `source` with each hexadecimal number written `0X...` as `0x...`: protoc reads both, protobufjs
 * only the lower-case prefix (`C = 0X7FFFFFFF;` was a syntax error).
 */
export function normalizeHexPrefix(source: string): string {
  if (!/\b0X[0-9a-fA-F]/.test(source)) return source;
  return rewriteCode(source, (i) =>
    source[i] === '0' &&
    source[i + 1] === 'X' &&
    !/\w/.test(source[i - 1] ?? '') &&
    /[0-9a-fA-F]/.test(source[i + 2] ?? '')
      ? { text: '0x', end: i + 2 }
      : undefined,
  );
}

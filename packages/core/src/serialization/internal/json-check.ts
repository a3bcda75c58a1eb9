import { SerializationError } from '../../errors';

/**
 * Deepest nesting of objects and arrays a JSON message may have, sent or received. Deep enough
 * for any data structure a message holds; shallow enough that encoding and decoding never
 * approach the stack's limit (V8 throws a bare RangeError near ~5,000 levels).
 */
export const MAX_JSON_DEPTH = 256;

/** The characters the depth scan stops at: brackets, and quotes (strings are skipped whole). */
const STRUCTURE = /["[\]{}]/g;

/**
 * Throws SerializationError if JSON `text` nests deeper than MAX_JSON_DEPTH. A text shorter
 * than the limit cannot, so the small messages of the hot path are not scanned. The scan jumps
 * from one bracket or quote to the next (a native search) and over each string's contents to
 * its closing quote: a character-by-character loop in JS was a quarter of a process's CPU with
 * 1 MiB JSON messages back to back (remote-large), most of it inside strings.
 */
export function checkJsonDepth(text: string): void {
  if (text.length <= MAX_JSON_DEPTH) return;
  let depth = 0;
  const structure = STRUCTURE;
  structure.lastIndex = 0;
  for (let m = structure.exec(text); m !== null; m = structure.exec(text)) {
    const at = m.index;
    const c = text.charCodeAt(at);
    if (c === 34 /* " */) {
      const end = closingQuote(text, at + 1);
      if (end < 0) return; // unterminated: not JSON, the parser refuses it
      structure.lastIndex = end + 1;
    } else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > MAX_JSON_DEPTH) {
        structure.lastIndex = 0;
        throw new SerializationError(
          '$',
          `JSON nested deeper than ${MAX_JSON_DEPTH} levels (MAX_JSON_DEPTH)`,
        );
      }
    } else depth--;
  }
}

/**
 * Index of the quote that closes the string whose contents start at `from` (one preceded by an
 * even number of backslashes), or -1. Each run of backslashes is counted once, for the quote
 * after it: linear in the text.
 */
function closingQuote(text: string, from: number): number {
  for (let q = text.indexOf('"', from); q >= 0; q = text.indexOf('"', q + 1)) {
    let k = q - 1;
    while (k >= from && text.charCodeAt(k) === 92 /* \\ */) k--;
    if ((q - 1 - k) % 2 === 0) return q;
  }
  return -1;
}

/**
 * Finds why `value` cannot travel as JSON and where; undefined if nothing is wrong. Run when
 * encoding failed or a value JSON would silently drop or mangle was seen (Map and Set become
 * `{}`, functions and symbols vanish): a walk of the whole value, off the hot path.
 */
export function jsonProblem(value: unknown): SerializationError | undefined {
  const seen = new Set<object>();
  const walk = (v: unknown, path: string, depth: number): SerializationError | undefined => {
    const problem = unsupported(v);
    if (problem !== undefined) return new SerializationError(path, problem);
    if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v)) return undefined;
    if (depth >= MAX_JSON_DEPTH) {
      return new SerializationError(
        path,
        `nesting deeper than ${MAX_JSON_DEPTH} levels (MAX_JSON_DEPTH)`,
      );
    }
    if (seen.has(v)) return new SerializationError(path, 'a cycle (the value contains itself)');
    seen.add(v);
    const holder =
      typeof (v as { toJSON?: unknown }).toJSON === 'function'
        ? (v as { toJSON(): unknown }).toJSON()
        : v;
    if (holder !== v) {
      const r = walk(holder, path, depth);
      seen.delete(v);
      return r;
    }
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const r = walk(v[i], `${path}[${i}]`, depth + 1);
        if (r) return r;
      }
    } else {
      for (const key of Object.keys(v)) {
        const r = walk((v as Record<string, unknown>)[key], `${path}${keyPath(key)}`, depth + 1);
        if (r) return r;
      }
    }
    seen.delete(v);
    return undefined;
  };
  return walk(value, '$', 0);
}

/** Why JSON cannot carry `v` itself (its contents aside); undefined when it can. */
export function unsupported(v: unknown): string | undefined {
  switch (typeof v) {
    case 'bigint':
      return 'a BigInt (send it as a string)';
    case 'function':
      return 'a function';
    case 'symbol':
      return 'a symbol';
    case 'object':
      if (v instanceof Map) return 'a Map (send Object.fromEntries(map) or [...map])';
      if (v instanceof Set) return 'a Set (send [...set])';
      return undefined;
    default:
      return undefined;
  }
}

function keyPath(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

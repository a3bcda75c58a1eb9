import { SerializationError } from '../../errors';

/**
 * Deepest nesting of objects and arrays a JSON message may have, sent or received. Deep enough
 * for any data structure a message holds; shallow enough that encoding and decoding never
 * approach the stack's limit (V8 throws a bare RangeError near ~5,000 levels).
 */
export const MAX_JSON_DEPTH = 256;

/**
 * Throws SerializationError if JSON `text` nests deeper than MAX_JSON_DEPTH. A text shorter
 * than the limit cannot, so the small messages of the hot path are not scanned.
 */
export function checkJsonDepth(text: string): void {
  if (text.length <= MAX_JSON_DEPTH) return;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \\ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > MAX_JSON_DEPTH) {
        throw new SerializationError(
          '$',
          `JSON nested deeper than ${MAX_JSON_DEPTH} levels (MAX_JSON_DEPTH)`,
        );
      }
    } else if (c === 93 || c === 125) depth--;
  }
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

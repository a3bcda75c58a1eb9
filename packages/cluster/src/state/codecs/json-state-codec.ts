import type { StateCodec } from './state-codec';

/** Options of {@link jsonStateCodec}. */
export interface JsonStateCodecOptions<T> {
  /**
   * Checks (or migrates) a decoded value and returns it as `T`; throw when it does not fit, so
   * old state after a schema change becomes a StateDecodeError instead of a wrong object.
   * @default undefined (any JSON value is accepted as `T`)
   */
  validate?: (value: unknown) => T;
}

// fatal: invalid UTF-8 is an error, not silently replaced characters.
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * State as UTF-8 JSON: for plain data (objects, arrays, strings, numbers, booleans, null).
 *
 * @example
 * const codec = jsonStateCodec<{ count: number }>({
 *   validate: (v) => {
 *     if (typeof (v as { count?: unknown }).count !== 'number') throw new Error('count missing');
 *     return v as { count: number };
 *   },
 * });
 */
export function jsonStateCodec<T>(options: JsonStateCodecOptions<T> = {}): StateCodec<T> {
  const validate = options.validate ?? ((v: unknown) => v as T);
  return {
    name: 'json',
    // Buffer.from, not TextEncoder: small results are slices of Node's shared pool instead of a
    // new ArrayBuffer each (measured ~0.4 vs ~1.8 µs per write-through call, and far less GC).
    // `?? ''`: JSON.stringify(undefined) is undefined; it encodes to no bytes, as before.
    encode: (state) => Buffer.from(JSON.stringify(state) ?? '', 'utf8'),
    decode: (bytes) => validate(JSON.parse(decoder.decode(bytes))),
  };
}

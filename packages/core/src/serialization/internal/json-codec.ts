/**
 * JSON for plain data, with `Uint8Array` values anywhere in the tree kept as bytes
 * (`{ "$bytes": "<base64>" }` on the wire) instead of JSON's array-of-numbers object.
 */
const BYTES_KEY = '$bytes';
const BYTES_MARKER = '"$bytes"';

function replacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  // `this[key]` is the value before toJSON ran: Buffer.toJSON would otherwise hide the bytes.
  const original = this[key];
  if (original instanceof Uint8Array) {
    return {
      [BYTES_KEY]: Buffer.from(original.buffer, original.byteOffset, original.byteLength).toString(
        'base64',
      ),
    };
  }
  return value;
}

function reviver(_key: string, value: unknown): unknown {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const encoded = (value as Record<string, unknown>)[BYTES_KEY];
    if (typeof encoded === 'string' && Object.keys(value).length === 1) {
      return new Uint8Array(Buffer.from(encoded, 'base64'));
    }
  }
  return value;
}

/** Encodes plain data as UTF-8 JSON; returns undefined for values JSON cannot carry. */
export function encodeJson(value: unknown): Uint8Array | undefined {
  const text = JSON.stringify(value, replacer);
  return text === undefined ? undefined : Buffer.from(text, 'utf8');
}

/** Decodes what {@link encodeJson} wrote; the reviver runs only when bytes were embedded. */
export function decodeJson(bytes: Uint8Array): unknown {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  return text.includes(BYTES_MARKER) ? JSON.parse(text, reviver) : JSON.parse(text);
}

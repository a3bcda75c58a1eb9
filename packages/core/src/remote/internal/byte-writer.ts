/**
 * A growable buffer for hand-encoding protobuf on the hot path: one Buffer per frame instead
 * of protobufjs' linked list of small op objects per field (which dominated GC at 100k+ msg/s).
 * `headroom` bytes are kept free at the front for a length prefix known only at the end.
 */
export class ByteWriter {
  private buf: Buffer;
  private pos: number;

  constructor(
    /** Bytes to allocate, or memory to write into (its old contents are overwritten). */
    capacity: number | Buffer,
    private readonly headroom: number,
  ) {
    this.buf =
      typeof capacity === 'number'
        ? Buffer.allocUnsafe(Math.max(capacity, headroom + 64))
        : capacity.byteLength >= headroom + 64
          ? capacity
          : Buffer.allocUnsafe(headroom + 64);
    this.pos = headroom;
  }

  /** Bytes written after the headroom. */
  get length(): number {
    return this.pos - this.headroom;
  }

  /** Makes room for `n` more bytes. */
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  byte(b: number): void {
    this.buf[this.pos++] = b;
  }

  /** An unsigned varint below 2^32. */
  varint(value: number): void {
    let v = value >>> 0;
    while (v > 127) {
      this.buf[this.pos++] = (v & 127) | 128;
      v >>>= 7;
    }
    this.buf[this.pos++] = v;
  }

  /** Length-prefixed bytes. */
  bytes(value: Uint8Array): void {
    const n = value.byteLength;
    this.varint(n);
    if (n <= SMALL_COPY) {
      // A JS loop beats TypedArray.set's call overhead for the small payloads that dominate.
      const buf = this.buf;
      let pos = this.pos;
      for (let i = 0; i < n; i++) buf[pos++] = value[i]!;
      this.pos = pos;
    } else {
      this.buf.set(value, this.pos);
      this.pos += n;
    }
  }

  /** Length-prefixed UTF-8 of a string whose encoded length ({@link utf8Length}) is known. */
  string(value: string, byteLength: number): void {
    this.varint(byteLength);
    if (byteLength === value.length && byteLength <= SMALL_COPY) {
      // ASCII (byte length equals char count): no native call for ids and type names.
      const buf = this.buf;
      let pos = this.pos;
      for (let i = 0; i < byteLength; i++) buf[pos++] = value.charCodeAt(i);
      this.pos = pos;
    } else {
      this.pos += this.buf.write(value, this.pos, byteLength, 'utf8');
    }
  }

  /**
   * Length-prefixed `value` in one pass if it is ASCII and under 128 characters (its length is
   * then its byte length and fits one varint byte); false, with nothing written, otherwise.
   * The caller ensured room for 1 + value.length bytes.
   */
  asciiString(value: string): boolean {
    const n = value.length;
    if (n > 127) return false;
    const buf = this.buf;
    const start = this.pos;
    let pos = start + 1;
    for (let i = 0; i < n; i++) {
      const c = value.charCodeAt(i);
      if (c > 0x7f) return false;
      buf[pos++] = c;
    }
    buf[start] = n;
    this.pos = pos;
    return true;
  }

  /**
   * Writes `prefix` (e.g. tag + length) into the headroom right before the body and returns
   * prefix + body, sharing this writer's memory (the writer must not be used afterwards).
   */
  finish(prefix: Uint8Array): Buffer {
    const start = this.headroom - prefix.byteLength;
    this.buf.set(prefix, start);
    return this.buf.subarray(start, this.pos);
  }
}

/** Up to this many bytes are copied in a JS loop rather than by a native call. */
const SMALL_COPY = 64;

/** Longer strings are measured by Buffer.byteLength (native) rather than in a JS loop. */
const NATIVE_LENGTH_FROM = 256;

/**
 * UTF-8 byte length of a string (a lone surrogate counts 3, as it is written): computed in JS
 * for short ids and keys (cheaper than a native call), natively for long text (a JSON message
 * of 1 MiB measured in the JS loop was a tenth of a process's CPU in remote-large).
 */
export function utf8Length(value: string): number {
  if (value.length >= NATIVE_LENGTH_FROM) return Buffer.byteLength(value, 'utf8');
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < value.length) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        n += 4;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

/** Encoded size of an unsigned varint below 2^32. */
export function varintSize(value: number): number {
  const v = value >>> 0;
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
}

/** Encoded size of a length-prefixed field body (without its tag). */
export function lengthDelimitedSize(byteLength: number): number {
  return varintSize(byteLength) + byteLength;
}

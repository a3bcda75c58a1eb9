/**
 * A growable buffer for hand-encoding protobuf on the hot path: one Buffer per frame instead
 * of protobufjs' linked list of small op objects per field (which dominated GC at 100k+ msg/s).
 * `headroom` bytes are kept free at the front for a length prefix known only at the end.
 */
export class ByteWriter {
  private buf: Buffer;
  private pos: number;

  constructor(
    capacity: number,
    private readonly headroom: number,
  ) {
    this.buf = Buffer.allocUnsafe(Math.max(capacity, headroom + 64));
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
    this.varint(value.byteLength);
    this.buf.set(value, this.pos);
    this.pos += value.byteLength;
  }

  /** Length-prefixed UTF-8 of a string whose encoded length the caller already measured. */
  string(value: string, byteLength: number): void {
    this.varint(byteLength);
    this.pos += this.buf.write(value, this.pos, byteLength, 'utf8');
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

/** Encoded size of an unsigned varint below 2^32. */
export function varintSize(value: number): number {
  const v = value >>> 0;
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
}

/** Encoded size of a length-prefixed field body (without its tag). */
export function lengthDelimitedSize(byteLength: number): number {
  return varintSize(byteLength) + byteLength;
}

import * as protobuf from 'protobufjs';
import { varintSize } from './byte-writer';

/** A frame that is one chunk starts with this tag (Frame field 5, length-delimited). */
export const FRAME_CHUNK_TAG = (5 << 3) | 2;
const CHUNK_TOTAL = 1 << 3;
const CHUNK_DATA = (2 << 3) | 2;

/** A decoded chunk: `total` (the whole frame's size) on the first chunk only, 0 after. */
export interface Chunk {
  total: number;
  data: Uint8Array;
}

/**
 * `Frame { chunk: { total?, data: frame[offset, offset + size) } }`: one piece of a large
 * message's frame, written between the small batches of its link. The first piece states the
 * size of the whole frame, so the receiver allocates it once (within its limits). `memory`
 * gives the bytes to encode into (exactly `bytes` long); by default they are allocated.
 */
export function encodeChunk(
  frame: Uint8Array,
  offset: number,
  size: number,
  memory?: (bytes: number) => Buffer,
): Buffer {
  const first = offset === 0;
  const body = (first ? 1 + varintSize(frame.byteLength) : 0) + 1 + varintSize(size) + size;
  const length = 1 + varintSize(body) + body;
  const out = memory === undefined ? Buffer.allocUnsafe(length) : memory(length);
  let pos = 0;
  out[pos++] = FRAME_CHUNK_TAG;
  pos = varint(out, pos, body);
  if (first) {
    out[pos++] = CHUNK_TOTAL;
    pos = varint(out, pos, frame.byteLength);
  }
  out[pos++] = CHUNK_DATA;
  pos = varint(out, pos, size);
  out.set(frame.subarray(offset, offset + size), pos);
  return out;
}

/**
 * Decodes a chunk frame; undefined if `bytes` is not one (the caller decodes it as a frame).
 * `data` is a view into `bytes`.
 * @throws Error on malformed bytes.
 */
export function decodeChunk(bytes: Uint8Array): Chunk | undefined {
  if (bytes.byteLength === 0 || bytes[0] !== FRAME_CHUNK_TAG) return undefined;
  const r = protobuf.Reader.create(bytes);
  r.uint32();
  const end = r.uint32() + r.pos;
  if (end !== r.len) throw new Error('chunk length does not match its frame');
  let total = 0;
  let data: Uint8Array | undefined;
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === CHUNK_TOTAL) total = r.uint32();
    else if (tag === CHUNK_DATA) {
      const n = r.uint32();
      data = bytes.subarray(r.pos, r.pos + n);
      r.skip(n);
    } else r.skipType(tag & 7);
  }
  if (data === undefined) throw new Error('chunk without data');
  return { total, data };
}

function varint(out: Buffer, pos: number, value: number): number {
  let v = value >>> 0;
  while (v > 127) {
    out[pos++] = (v & 127) | 128;
    v >>>= 7;
  }
  out[pos++] = v;
  return pos;
}

/** A frame that is one credit starts with this tag (Frame field 8, length-delimited). */
export const FRAME_CREDIT_TAG = (8 << 3) | 2;

/** `Frame { credit: { received } }`. */
export function encodeCredit(received: number): Buffer {
  const v = received >>> 0;
  const body = 1 + varintSize(v);
  const out = Buffer.allocUnsafe(2 + body);
  out[0] = FRAME_CREDIT_TAG;
  out[1] = body;
  out[2] = CHUNK_TOTAL; // field 1, varint: the same tag byte as a chunk's total
  varint(out, 3, v);
  return out;
}

/**
 * The received count of a credit frame; undefined if `bytes` is not one.
 * @throws Error on a malformed credit.
 */
export function decodeCredit(bytes: Uint8Array): number | undefined {
  if (bytes.byteLength === 0 || bytes[0] !== FRAME_CREDIT_TAG) return undefined;
  const r = protobuf.Reader.create(bytes);
  r.uint32();
  const end = r.uint32() + r.pos;
  if (end !== r.len) throw new Error('credit length does not match its frame');
  let received = 0;
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === CHUNK_TOTAL) received = r.uint32();
    else r.skipType(tag & 7);
  }
  return received;
}

import { GRPC_PREFIX_BYTES } from './grpc-decoder';

/**
 * Memory allocated with room for gRPC's 5-byte message prefix in front of a frame (see
 * {@link framedInPlace}). A WeakSet of the ArrayBuffers, so a view's memory can be checked.
 */
const PREFIXABLE = new WeakSet<ArrayBufferLike>();

/** How often frames were framed in place (for tests: the fast path is really taken). */
export const FRAMED_IN_PLACE = { count: 0 };

/**
 * New memory of `bytes` bytes plus room for gRPC's prefix: the frame goes at
 * GRPC_PREFIX_BYTES (`memory.subarray(GRPC_PREFIX_BYTES, ...)`). Such a frame is written by
 * grpc-js without the copy it otherwise makes of every message (see {@link framedInPlace}).
 */
export function prefixableMemory(bytes: number): Buffer {
  // Never from Node's shared pool: the prefix's bytes must be ours.
  const memory = Buffer.allocUnsafeSlow(GRPC_PREFIX_BYTES + bytes);
  PREFIXABLE.add(memory.buffer);
  return memory;
}

/**
 * `frame` with gRPC's prefix (uncompressed, its length) written into the room before it: a
 * view, no copy. Undefined for a frame that has no such room (one not at GRPC_PREFIX_BYTES
 * of memory from {@link prefixableMemory}); grpc-js then copies it into a new framed buffer
 * as usual. The room is written when grpc-js frames the message, which is before its write
 * completes, so the memory must not serve another frame before then (it does not: chunk
 * buffers are reused only once their write completed).
 */
export function framedInPlace(frame: unknown): Buffer | undefined {
  if (!(frame instanceof Uint8Array) || frame.byteOffset !== GRPC_PREFIX_BYTES) return undefined;
  const memory = frame.buffer;
  if (!PREFIXABLE.has(memory)) return undefined;
  const framed = Buffer.from(memory, 0, GRPC_PREFIX_BYTES + frame.byteLength);
  framed[0] = 0;
  framed.writeUInt32BE(frame.byteLength, 1);
  FRAMED_IN_PLACE.count++;
  return framed;
}

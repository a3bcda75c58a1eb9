import { GRPC_PREFIX_BYTES } from './grpc-decoder';
import { prefixableMemory } from './grpc-frames';

/**
 * Most chunk buffers kept for reuse per process: a link has at most MAX_CHUNK_BYTES_IN_FLIGHT
 * (64 KiB, one chunk) of chunks written and not yet taken, so enough for many links at once.
 */
const MAX_SPARE = 16;

/**
 * Buffers for the chunks of large messages, reused once a chunk's write completed. A new
 * 64 KiB buffer per chunk was 1 MiB of ArrayBuffers per 1 MiB message, and that churn of
 * external memory is what drives V8 into full garbage collections every few messages
 * (remote-large: one every 50-70 ms, pausing the small calls). Each has room for gRPC's
 * prefix before the chunk, so grpc-js frames it in place instead of copying it (see
 * grpc-fast-path); a write completes once HTTP/2 wrote it (or, where grpc-js copies, once it
 * copied it), so the memory is free again then.
 */
export class ChunkBuffers {
  private readonly spare: Buffer[] = [];

  /**
   * `bytes` bytes to encode a chunk into: a view of a reused buffer, or of a new one of
   * `capacity` bytes (what the link's largest chunk needs).
   */
  take(bytes: number, capacity: number): Buffer {
    let memory = this.spare.pop();
    // (A spare too small for this link's chunks is dropped.)
    if (memory === undefined || memory.byteLength - GRPC_PREFIX_BYTES < bytes) {
      memory = prefixableMemory(Math.max(bytes, capacity));
    }
    return memory.subarray(GRPC_PREFIX_BYTES, GRPC_PREFIX_BYTES + bytes);
  }

  /**
   * The write of a chunk from `take` completed: its memory may serve another chunk. Nothing
   * may read `chunk` after this.
   */
  give(chunk: Buffer): void {
    if (this.spare.length >= MAX_SPARE) return;
    // The whole allocation (its prefix room too), not the chunk's view of it.
    this.spare.push(Buffer.from(chunk.buffer));
  }
}

/** The process's chunk buffers (one loop: no two links write a chunk at the same time). */
export const CHUNK_BUFFERS = new ChunkBuffers();

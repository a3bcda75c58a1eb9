/**
 * Most chunk buffers kept for reuse per process: a link has at most MAX_CHUNK_BYTES_IN_FLIGHT
 * (256 KiB) of chunks written and not yet taken, four 64 KiB chunks, so a few links at once.
 */
const MAX_SPARE = 16;

/**
 * Buffers for the chunks of large messages, reused once grpc-js has taken a chunk (its write
 * completed: grpc-js copies every message into its own framed buffer before writing it, on
 * the client and the server side). A new 64 KiB buffer per chunk was 1 MiB of ArrayBuffers
 * per 1 MiB message, and that churn of external memory is what drives V8 into full garbage
 * collections every few messages (remote-large: one every 50-70 ms, pausing the small calls).
 */
export class ChunkBuffers {
  private readonly spare: Buffer[] = [];

  /**
   * `bytes` bytes to encode a chunk into: a view of a reused buffer, or of a new one of
   * `capacity` bytes (what the link's largest chunk needs).
   */
  take(bytes: number, capacity: number): Buffer {
    const buffer = this.spare.pop();
    if (buffer !== undefined && buffer.byteLength >= bytes) return buffer.subarray(0, bytes);
    // (A spare too small for this link's chunks is dropped.) Never from Node's shared pool:
    // a small Buffer.allocUnsafe is a slice of memory that other buffers live in.
    return Buffer.allocUnsafeSlow(Math.max(bytes, capacity)).subarray(0, bytes);
  }

  /**
   * The write of a chunk from `take` completed: its memory may serve another chunk. Nothing
   * may read `chunk` after this.
   */
  give(chunk: Buffer): void {
    if (this.spare.length >= MAX_SPARE) return;
    // The whole allocation, not the chunk's view of it (a last chunk may be short).
    this.spare.push(Buffer.from(chunk.buffer));
  }
}

/** The process's chunk buffers (one loop: no two links write a chunk at the same time). */
export const CHUNK_BUFFERS = new ChunkBuffers();

import { RemoteLimitError } from '../../errors';
import type { AssemblyBudget, AssemblyHolder } from './assembly-budget';
import type { Chunk } from './link-frames';

/**
 * Most assembly buffers kept for reuse per process: one per link that receives a large
 * message at the same time, for a few links; others are allocated and dropped.
 */
const MAX_SPARE = 2;
/** Smaller frames are not worth keeping a buffer for (allocation is cheap below it). */
const MIN_SPARE_BYTES = 64 * 1024;

/**
 * Memory that chunked frames are joined in, reused from one frame to the next when no message
 * delivered from the frame keeps a view of it (JSON and error payloads: see
 * WireBatch.reused). A new buffer per frame (1 MiB per 1 MiB message) is external memory that
 * V8 counts towards starting a full garbage collection; with large messages back to back those
 * allocations (with grpc-js' own copies of every chunk, sent and received) set one off every
 * ~100 ms in a busy process. A frame whose payload is bytes (delivered as a view) or protobuf
 * (bytes fields are views) is not given back: it stays with its message.
 */
export class AssemblyBuffers {
  private readonly spare: Buffer[] = [];

  /** A buffer of exactly `bytes` bytes (a view of a spare one when one is large enough). */
  take(bytes: number): Buffer {
    for (let i = this.spare.length - 1; i >= 0; i--) {
      const buffer = this.spare[i]!;
      if (buffer.byteLength >= bytes) {
        this.spare.splice(i, 1);
        return buffer.subarray(0, bytes);
      }
    }
    // Never from Node's shared pool: a small Buffer.allocUnsafe is a slice others live in.
    return Buffer.allocUnsafeSlow(bytes);
  }

  /**
   * A frame from `take` was delivered: its memory may join another. Nothing may read `frame`
   * (or a view of it) after this. The smallest spare gives way to a larger one.
   */
  give(frame: Buffer): void {
    const memory = frame.buffer;
    if (memory.byteLength < MIN_SPARE_BYTES) return;
    const whole = Buffer.from(memory);
    if (this.spare.length < MAX_SPARE) {
      this.spare.push(whole);
      return;
    }
    let smallest = 0;
    for (let i = 1; i < this.spare.length; i++) {
      if (this.spare[i]!.byteLength < this.spare[smallest]!.byteLength) smallest = i;
    }
    if (this.spare[smallest]!.byteLength < memory.byteLength) this.spare[smallest] = whole;
  }

  /** Bytes of the spare buffers (for tests). */
  get spareBytes(): number {
    let n = 0;
    for (const b of this.spare) n += b.byteLength;
    return n;
  }
}

/** The process's assembly buffers (one loop: frames are delivered one at a time). */
export const ASSEMBLY_BUFFERS = new AssemblyBuffers();

/**
 * Joins the chunks of one large frame as they arrive (its link sends one large frame at a
 * time, so one frame per link at a time). The first chunk states the whole size, which must
 * be within `maxBytes`; the frame's memory comes from `buffers` and is filled in place. The
 * frame returned is the caller's; it gives it back to `buffers` once nothing needs it.
 *
 * With a `budget` (its node's) and a `holder` (its link), the frame's memory is counted there
 * from its first chunk to its last: a frame the budget has no room for drops the frames stalled
 * longest, and a frame the budget drops (see AssemblyBudget) is forgotten here.
 */
export class ChunkAssembler {
  private frame: Buffer | undefined = undefined;
  private filled = 0;

  private readonly buffers: AssemblyBuffers;
  private readonly budget: AssemblyBudget | undefined;
  private readonly holder: AssemblyHolder | undefined;

  constructor(
    private readonly maxBytes: number,
    options: {
      buffers?: AssemblyBuffers;
      budget?: AssemblyBudget | undefined;
      holder?: AssemblyHolder;
    } = {},
  ) {
    this.buffers = options.buffers ?? ASSEMBLY_BUFFERS;
    this.budget = options.budget;
    this.holder = options.holder;
  }

  /** Forgets the frame being joined (its link closed): its memory leaves the budget. */
  drop(): void {
    this.frame = undefined;
    if (this.holder !== undefined) this.budget?.release(this.holder);
  }

  /** Bytes held for a frame still incomplete. */
  get pendingBytes(): number {
    return this.frame?.byteLength ?? 0;
  }

  /**
   * Adds the next chunk; returns the whole frame when this chunk completes it.
   * @throws RemoteLimitError for a frame over `maxBytes`; Error for chunks out of order.
   */
  add(chunk: Chunk): Buffer | undefined {
    if (this.frame === undefined) {
      if (chunk.total === 0) throw new Error('a chunk continues no frame');
      if (chunk.total > this.maxBytes) {
        throw new RemoteLimitError(
          'maxMessageBytes',
          `a chunked frame of ${chunk.total} bytes is over ${this.maxBytes} bytes`,
        );
      }
      if (this.holder !== undefined) this.budget?.reserve(this.holder, chunk.total);
      this.frame = this.buffers.take(chunk.total);
      this.filled = 0;
    } else if (chunk.total !== 0) {
      throw new Error('a chunk starts a frame before the previous one is complete');
    } else if (this.holder !== undefined) {
      this.budget?.progress(this.holder);
    }
    const frame = this.frame;
    if (this.filled + chunk.data.byteLength > frame.byteLength) {
      throw new Error('chunks overrun the size their frame stated');
    }
    frame.set(chunk.data, this.filled);
    this.filled += chunk.data.byteLength;
    if (this.filled < frame.byteLength) return undefined;
    this.drop();
    return frame;
  }
}

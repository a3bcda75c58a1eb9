import { RemoteLimitError } from '../../errors';
import type { Chunk } from './link-frames';

/**
 * Joins the chunks of one large frame as they arrive (its link sends one large frame at a
 * time, so one buffer per link). The first chunk states the whole size, which must be within
 * `maxBytes`; the frame is allocated once and filled in place.
 */
export class ChunkAssembler {
  private frame: Buffer | undefined = undefined;
  private filled = 0;

  constructor(private readonly maxBytes: number) {}

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
      this.frame = Buffer.allocUnsafe(chunk.total);
      this.filled = 0;
    } else if (chunk.total !== 0) {
      throw new Error('a chunk starts a frame before the previous one is complete');
    }
    const frame = this.frame;
    if (this.filled + chunk.data.byteLength > frame.byteLength) {
      throw new Error('chunks overrun the size their frame stated');
    }
    frame.set(chunk.data, this.filled);
    this.filled += chunk.data.byteLength;
    if (this.filled < frame.byteLength) return undefined;
    this.frame = undefined;
    return frame;
  }
}

/** Bytes of gRPC's message prefix: a compressed flag and the length, 4 bytes big-endian. */
export const GRPC_PREFIX_BYTES = 5;

/** Messages from this size on are decoded into reused memory (chunks of large messages). */
const POOLED_MIN_BYTES = 16 * 1024;
/** Reused buffers are allocated in steps of this, so a chunk a few bytes longer still fits. */
const POOLED_STEP_BYTES = 16 * 1024;
/**
 * Most spare receive buffers per process: a chunk is handed back as soon as its link copied it
 * into its frame, so few are out at a time (one per link that receives a large message, and
 * the odd one in grpc-js' read queue).
 */
const MAX_SPARE = 8;

/**
 * Memory that incoming gRPC messages of POOLED_MIN_BYTES or more are joined in (HTTP/2 brings
 * a 64 KiB chunk as 16 KiB DATA frames, so each needs one buffer it is copied into). grpc-js'
 * own decoder allocates that buffer anew per message: with 1 MiB messages back to back a MiB
 * of short-lived external memory per message each way, which V8 counts towards starting full
 * garbage collections. A link hands a message back (`give`) once nothing reads it (a chunk,
 * once copied into its frame); the rest are dropped as before.
 */
export class ReceiveBuffers {
  private readonly spare: Buffer[] = [];
  /** The memory this pool allocated: only that may come back through `give`. */
  private readonly owned = new WeakSet<ArrayBufferLike>();
  /** Messages decoded into a spare, and messages handed back (for tests: the path is taken). */
  reused = 0;
  given = 0;

  /** `bytes` bytes to decode a message into: a view of a spare, or of new memory. */
  take(bytes: number): Buffer {
    const spare = this.spare.pop();
    if (spare !== undefined && spare.byteLength >= bytes) {
      this.reused++;
      return spare.subarray(0, bytes);
    }
    const capacity = Math.ceil(bytes / POOLED_STEP_BYTES) * POOLED_STEP_BYTES;
    // Never from Node's shared pool: a small Buffer.allocUnsafe is a slice others live in.
    const memory = Buffer.allocUnsafeSlow(capacity);
    this.owned.add(memory.buffer);
    return memory.subarray(0, bytes);
  }

  /**
   * `message` (or a view of it) was read and nothing keeps it: its memory may take another
   * message. False (and nothing done) for memory this pool did not allocate.
   */
  give(message: Uint8Array): boolean {
    const memory = message.buffer;
    if (!this.owned.has(memory)) return false;
    this.given++;
    if (this.spare.length < MAX_SPARE) this.spare.push(Buffer.from(memory));
    return true;
  }
}

/** The process's receive buffers (one loop: a message is decoded or handed back at a time). */
export const RECEIVE_BUFFERS = new ReceiveBuffers();

/** What grpc-js' StreamDecoder (1.14) exposes that the replacement needs. */
interface GrpcStreamDecoder {
  /** Largest message accepted (-1: any); the acceptor lowers it before authentication. */
  maxReadMessageLength: number;
  /** 0 (NO_DATA) between messages. */
  readState: number;
  write(data: Buffer): Buffer[];
}

/**
 * Replaces the `write` of grpc-js' per-call StreamDecoder with {@link FrameDecoder}, which
 * produces the same prefixed messages, large ones in memory from `buffers`. Only between
 * messages (else the decoder's partial state would be lost) and only where the decoder has
 * the expected shape: false otherwise, and grpc-js' own decoder goes on (a copy per message).
 */
export function replaceDecoder(
  decoder: unknown,
  buffers: ReceiveBuffers = RECEIVE_BUFFERS,
): boolean {
  const d = decoder as Partial<GrpcStreamDecoder> | undefined;
  if (
    d === undefined ||
    d === null ||
    typeof d.write !== 'function' ||
    typeof d.maxReadMessageLength !== 'number' ||
    d.readState !== 0
  ) {
    return false;
  }
  const ours = new FrameDecoder(d as GrpcStreamDecoder, buffers);
  d.write = (data: Buffer): Buffer[] => ours.write(data);
  return true;
}

/**
 * Splits a call's incoming bytes into gRPC messages, each returned whole with its 5-byte
 * prefix (what grpc-js' decoder returns; grpc-js strips the prefix). A message over the
 * decoder's `maxReadMessageLength` throws before anything of it is buffered, and so does
 * every later write (the call is failing).
 */
export class FrameDecoder {
  private readonly prefix = Buffer.alloc(GRPC_PREFIX_BYTES);
  private prefixFilled = 0;
  private message: Buffer | undefined = undefined;
  private filled = 0;
  private refused: Error | undefined = undefined;

  constructor(
    private readonly limits: { maxReadMessageLength: number },
    private readonly buffers: ReceiveBuffers = RECEIVE_BUFFERS,
  ) {}

  /**
   * The messages `data` completes, in order.
   * @throws Error for a message over the limit.
   */
  write(data: Buffer): Buffer[] {
    if (this.refused) throw this.refused;
    const out: Buffer[] = [];
    const end = data.byteLength;
    let pos = 0;
    while (pos < end) {
      if (this.message === undefined) {
        const n = Math.min(GRPC_PREFIX_BYTES - this.prefixFilled, end - pos);
        data.copy(this.prefix, this.prefixFilled, pos, pos + n);
        this.prefixFilled += n;
        pos += n;
        if (this.prefixFilled < GRPC_PREFIX_BYTES) break;
        this.prefixFilled = 0;
        const message = this.start(this.prefix.readUInt32BE(1));
        if (this.filled === message.byteLength) {
          out.push(message);
          continue;
        }
        this.message = message;
      }
      const message = this.message;
      const n = Math.min(message.byteLength - this.filled, end - pos);
      data.copy(message, this.filled, pos, pos + n);
      this.filled += n;
      pos += n;
      if (this.filled === message.byteLength) {
        this.message = undefined;
        out.push(message);
      }
    }
    return out;
  }

  /** Memory for a message of `length` bytes after its prefix, the prefix copied in. */
  private start(length: number): Buffer {
    const max = this.limits.maxReadMessageLength;
    if (max !== -1 && length > max) {
      this.refused = new Error(`Received message larger than max (${length} vs ${max})`);
      throw this.refused;
    }
    const total = GRPC_PREFIX_BYTES + length;
    const message =
      total >= POOLED_MIN_BYTES ? this.buffers.take(total) : Buffer.allocUnsafe(total);
    this.prefix.copy(message, 0);
    this.filled = GRPC_PREFIX_BYTES;
    return message;
  }
}

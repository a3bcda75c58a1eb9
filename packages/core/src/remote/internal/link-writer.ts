import { PeerNotReadingError } from '../../errors';
import { encodeCredit } from './link-frames';
import type { FrameStream, WriterLimits } from './link-types';

/**
 * Most bytes handed to the stream and not yet taken by the connection before the link is
 * blocked (it is writable again at a quarter of it); see {@link streamHighWater}. grpc-js' own
 * signal counts frames (full at 16, drained only when empty). Honoured, it kept ~100 KiB of
 * batch frames in flight, so a burst of sends waited in the sender as envelope objects: in
 * remote-throughput up to 430,000 of them, promoted to the old generation, the sender spent 35%
 * of its CPU in garbage collection and moved 0.8M messages/s where the same connection, fed
 * frames, moves 1.7M. Waiting as frames they cost their bytes only. Measured with 500,000
 * sends per burst: 1 MiB in the stream 1.0M/s, 4 MiB 1.2M/s, 8 MiB 1.7M/s (nothing waited).
 */
const STREAM_HIGH_WATER_BYTES = 8 * 1024 * 1024;

/**
 * The link's high-water mark: STREAM_HIGH_WATER_BYTES, or half of `maxOutboundBytes` when that
 * is smaller, so a healthy link whose stream is full (those bytes, plus the peer's HTTP/2
 * window in flight) stays under the bound that declares its peer not reading.
 */
export function streamHighWater(limits: WriterLimits): number {
  return Math.min(STREAM_HIGH_WATER_BYTES, Math.floor(limits.maxOutboundBytes / 2));
}

/** Told when the peer credits nothing for a while, and when it credits again. */
export interface SilenceWatcher {
  silent(silentMs: number): void;
  heard(): void;
}

/**
 * The writing half of a link. It bounds the bytes in the stream (past {@link streamHighWater}
 * frames wait here, not in grpc-js, and the sender keeps envelopes unencoded; grpc-js' own
 * frame-count signal is not used), and it knows what the peer has really read:
 * the peer credits the bytes it received (Credit frames, see remote.proto), because grpc-js
 * and HTTP/2 accept writes into their own buffers whether or not the peer reads. More than
 * `maxOutboundBytes` uncredited, or bytes uncredited with no credit for
 * `writeStallTimeoutMs`, means the peer is not reading: `onStuck` gets a PeerNotReadingError
 * and the link closes.
 */
export class LinkWriter {
  private blocked = false;
  private readonly backlog: Buffer[] = [];
  /** Callbacks of writes still pending, in order (undefined for writes without one). */
  private readonly callbacks: Array<(() => void) | undefined> = [];
  /** The byte length of each of those writes. */
  private readonly sizes: number[] = [];
  private head = 0;
  /** Bytes written to the stream whose write has not completed (grpc-js and HTTP/2 hold them). */
  private inStream = 0;
  private readonly highWater: number;
  private readonly lowWater: number;
  /** Bytes written since the handshake, and the peer's credit, both modulo 2^32. */
  private sent = 0;
  private credited = 0;
  private stall: NodeJS.Timeout | undefined = undefined;
  /** Date.now() when the peer last credited bytes (or when bytes began to wait). */
  private lastProgress = 0;
  private stopped = false;

  constructor(
    private readonly stream: FrameStream,
    private readonly limits: WriterLimits,
    private readonly peer: () => string,
    private readonly onStuck: (error: PeerNotReadingError) => void,
    /** The stream drained (frames may be written again without waiting). */
    private readonly onWritable: () => void,
    private readonly silence?: SilenceWatcher,
  ) {
    this.highWater = streamHighWater(limits);
    this.lowWater = this.highWater >>> 2;
  }

  /** True while frames wait here for the stream to drain. */
  get isBlocked(): boolean {
    return this.blocked;
  }

  /** Bytes written that the peer has not credited yet. */
  get outstanding(): number {
    return (this.sent - this.credited) >>> 0;
  }

  /**
   * Writes a frame, or keeps it until the stream drains; `done` runs once it left for the
   * connection. `counted`: false for frames the peer does not credit (handshake, credits).
   */
  write(frame: Buffer, done?: () => void, counted = true): void {
    if (this.stopped) return;
    if (counted) {
      this.sent = (this.sent + frame.byteLength) >>> 0;
      const outstanding = this.outstanding;
      if (outstanding > this.limits.maxOutboundBytes) {
        return this.stuck(
          'maxOutboundBytes',
          `${outstanding} bytes written to it are not read (${this.limits.maxOutboundBytes} allowed)`,
        );
      }
      if (this.stall === undefined) this.armStall();
    }
    this.callbacks.push(done);
    this.sizes.push(frame.byteLength);
    if (this.blocked) this.backlog.push(frame);
    else this.toStream(frame);
  }

  /**
   * How long the peer has credited nothing while bytes were outstanding (0 when nothing is):
   * a peer that reads credits every 64 KiB or within 20 ms of a frame.
   */
  uncreditedForMs(now: number): number {
    return this.outstanding === 0 ? 0 : now - this.lastProgress;
  }

  /** The peer is not reading (see LinkSender's waiting bound): the link closes. */
  notReading(detail: string): void {
    this.stuck('maxOutboundBytes', detail);
  }

  /** The peer's credit: it has received `received` bytes (modulo 2^32) since the handshake. */
  credit(received: number): void {
    const progress = (received - this.credited) >>> 0;
    // More than was sent is no credit of ours (a confused peer): ignore it.
    if (progress === 0 || progress > this.outstanding) return;
    this.credited = received >>> 0;
    this.lastProgress = Date.now();
    this.silence?.heard();
  }

  /** Tells the peer what this side received (not itself counted). */
  sendCredit(received: number): void {
    this.write(encodeCredit(received), undefined, false);
  }

  /** Writes what waits regardless of the stream's state (an orderly end follows). */
  flushAll(): void {
    for (const frame of this.backlog.splice(0)) {
      this.inStream += frame.byteLength;
      this.stream.write(frame, this.written);
    }
    this.blocked = false;
  }

  /** Stops the stall timer; later writes are dropped (the link is closed). */
  stop(): void {
    this.stopped = true;
    this.backlog.length = 0;
    if (this.stall) clearTimeout(this.stall);
    this.stall = undefined;
  }

  /** Hands a frame to the stream; past the high-water mark the link is blocked. */
  private toStream(frame: Buffer): void {
    this.inStream += frame.byteLength;
    // The stream's own full signal is ignored (see STREAM_HIGH_WATER_BYTES): it buffers anyway.
    this.stream.write(frame, this.written);
    if (this.inStream >= this.highWater) this.blocked = true;
  }

  /**
   * Watches for credit while bytes are outstanding (one timer, re-armed as credit comes; it
   * ticks every linkProbeMs so a silent peer is probed, see PathProbe).
   */
  private armStall(): void {
    this.lastProgress = Date.now();
    this.rearm(0);
  }

  private rearm(idle: number): void {
    const { writeStallTimeoutMs, linkProbeMs } = this.limits;
    let wait = writeStallTimeoutMs - idle;
    if (linkProbeMs > 0 && this.silence) {
      wait = Math.min(wait, idle < linkProbeMs ? linkProbeMs - idle : linkProbeMs);
    }
    this.stall = setTimeout(this.checkStall, wait);
    this.stall.unref();
  }

  private readonly checkStall = (): void => {
    this.stall = undefined;
    if (this.stopped || this.outstanding === 0) return;
    const idle = Date.now() - this.lastProgress;
    if (idle >= this.limits.writeStallTimeoutMs) {
      return this.stuck(
        'writeStallTimeoutMs',
        `it read none of ${this.outstanding} bytes for ${idle} ms`,
      );
    }
    const probeMs = this.limits.linkProbeMs;
    if (probeMs > 0 && idle >= probeMs) this.silence?.silent(idle);
    if (!this.stopped) this.rearm(idle);
  };

  private readonly written = (): void => {
    const i = this.head++;
    const done = this.callbacks[i];
    this.inStream -= this.sizes[i]!;
    if (this.head > 1024 && this.head * 2 > this.callbacks.length) {
      this.callbacks.splice(0, this.head);
      this.sizes.splice(0, this.head);
      this.head = 0;
    }
    if (this.blocked && this.inStream <= this.lowWater) this.drained();
    done?.();
  };

  private drained(): void {
    if (this.stopped) return;
    this.blocked = false;
    while (this.backlog.length > 0 && !this.blocked) this.toStream(this.backlog.shift()!);
    if (!this.blocked) this.onWritable();
  }

  private stuck(limit: 'maxOutboundBytes' | 'writeStallTimeoutMs', detail: string): void {
    if (this.stopped) return;
    this.stop();
    this.onStuck(new PeerNotReadingError(this.peer(), limit, detail));
  }
}

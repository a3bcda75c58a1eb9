import { PeerNotReadingError } from '../../errors';
import { encodeCredit } from './link-frames';
import type { FrameStream } from './link-types';

/** Bounds of what one link may have written that the peer has not confirmed. */
export interface WriterLimits {
  maxOutboundBytes: number;
  writeStallTimeoutMs: number;
  /** Uncredited this long, the peer is `silent` (probed), and again at this period. 0: never. */
  linkProbeMs: number;
}

/** Told when the peer credits nothing for a while, and when it credits again. */
export interface SilenceWatcher {
  silent(silentMs: number): void;
  heard(): void;
}

/**
 * The writing half of a link. It honours the stream's `write()` result (while the stream says
 * it is full, frames wait here, not in grpc-js), and it knows what the peer has really read:
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
  private head = 0;
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
  ) {}

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
    for (const frame of this.backlog.splice(0)) this.stream.write(frame, this.written);
    this.blocked = false;
  }

  /** Stops the stall timer; later writes are dropped (the link is closed). */
  stop(): void {
    this.stopped = true;
    this.backlog.length = 0;
    if (this.stall) clearTimeout(this.stall);
    this.stall = undefined;
  }

  private toStream(frame: Buffer): void {
    if (this.stream.write(frame, this.written)) return;
    this.blocked = true;
    this.stream.once('drain', this.drained);
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
    const done = this.callbacks[this.head++];
    if (this.head > 1024 && this.head * 2 > this.callbacks.length) {
      this.callbacks.splice(0, this.head);
      this.head = 0;
    }
    done?.();
  };

  private readonly drained = (): void => {
    if (this.stopped) return;
    this.blocked = false;
    while (this.backlog.length > 0 && !this.blocked) this.toStream(this.backlog.shift()!);
    if (!this.blocked) this.onWritable();
  };

  private stuck(limit: 'maxOutboundBytes' | 'writeStallTimeoutMs', detail: string): void {
    if (this.stopped) return;
    this.stop();
    this.onStuck(new PeerNotReadingError(this.peer(), limit, detail));
  }
}

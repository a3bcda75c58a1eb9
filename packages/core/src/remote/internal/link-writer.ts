import { PeerNotReadingError } from '../../errors';
import type { FrameStream } from './stream-link';

/** Bounds of what one link may hold unsent. */
export interface WriterLimits {
  maxOutboundBytes: number;
  writeStallTimeoutMs: number;
}

/**
 * The writing half of a link, honouring the stream's `write()` result: while the stream says
 * it is full, frames wait here (not in grpc-js) until it drains. Counts every byte written and
 * not yet handed to the connection (HTTP/2 flow control holds what the peer does not read).
 * More than `maxOutboundBytes` outstanding, or a stream full for `writeStallTimeoutMs`, means
 * the peer is not reading: `onStuck` gets a PeerNotReadingError and the link closes.
 */
export class LinkWriter {
  /** Bytes written or waiting that the connection has not taken yet. */
  outstanding = 0;
  private blocked = false;
  private readonly backlog: Buffer[] = [];
  /** Per write still pending: its byte count, and its callback if it has one. */
  private readonly lengths: number[] = [];
  private readonly callbacks: Array<(() => void) | undefined> = [];
  private head = 0;
  private stall: NodeJS.Timeout | undefined = undefined;
  private stopped = false;

  constructor(
    private readonly stream: FrameStream,
    private readonly limits: WriterLimits,
    private readonly peer: () => string,
    private readonly onStuck: (error: PeerNotReadingError) => void,
    /** The stream drained (frames may be written again without waiting). */
    private readonly onWritable: () => void,
  ) {}

  /** True while frames wait here for the stream to drain. */
  get isBlocked(): boolean {
    return this.blocked;
  }

  /** Writes a frame, or keeps it until the stream drains; `done` runs once it left. */
  write(frame: Buffer, done?: () => void): void {
    if (this.stopped) return;
    this.outstanding += frame.byteLength;
    if (this.outstanding > this.limits.maxOutboundBytes) {
      return this.stuck(
        'maxOutboundBytes',
        `${this.outstanding} bytes written to it are not taken (${this.limits.maxOutboundBytes} allowed)`,
      );
    }
    this.lengths.push(frame.byteLength);
    this.callbacks.push(done);
    if (this.blocked) this.backlog.push(frame);
    else this.toStream(frame);
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
    this.stall = setTimeout(
      () =>
        this.stuck(
          'writeStallTimeoutMs',
          `its stream took nothing for ${this.limits.writeStallTimeoutMs} ms`,
        ),
      this.limits.writeStallTimeoutMs,
    );
    this.stall.unref();
  }

  private readonly written = (): void => {
    const i = this.head++;
    this.outstanding -= this.lengths[i]!;
    const done = this.callbacks[i];
    if (this.head > 1024 && this.head * 2 > this.lengths.length) {
      this.lengths.splice(0, this.head);
      this.callbacks.splice(0, this.head);
      this.head = 0;
    }
    done?.();
  };

  private readonly drained = (): void => {
    if (this.stopped) return;
    if (this.stall) clearTimeout(this.stall);
    this.stall = undefined;
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

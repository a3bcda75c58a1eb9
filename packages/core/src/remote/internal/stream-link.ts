import { SYSTEM_CLOCK, type Clock } from '../../clock';
import * as grpc from '@grpc/grpc-js';
import type { WireFrame } from './wire';
import { decodeFrame } from './wire';

/** Either end of the Connect stream; both carry raw frame bytes. */
export type FrameStream =
  grpc.ClientDuplexStream<Buffer, Buffer> | grpc.ServerDuplexStream<Buffer, Buffer>;

/** What a link reports to its owner. */
export interface StreamLinkHandlers {
  /** `receivedAt`: clock.now() when the frame arrived (it may wait for its turn after that). */
  onFrame(link: StreamLink, frame: WireFrame, receivedAt: number): void;
  /** Called once; `error` is absent for an orderly end. */
  onClose(link: StreamLink, error?: Error): void;
  /** A frame could not be decoded; the link closes right after. */
  onCorruptFrame(link: StreamLink, error: Error): void;
}

/**
 * Frames received while one is being handled wait in the link; above this many the stream is
 * paused (HTTP/2 flow control then holds the peer back) and resumed at half.
 */
const MAX_QUEUED_FRAMES = 64;

/**
 * One open Connect stream, client side (we dialled) or server side (the peer dialled). Decodes
 * incoming frames, writes encoded ones, and turns the several ways a gRPC stream can end
 * (status, end, cancel, error) into exactly one onClose.
 */
export class StreamLink {
  /** The peer's address once its handshake told us (server side) or we dialled it (client). */
  peerAddress: string;
  /** The member id the peer stated in its handshake (once authenticated). */
  peerMemberId = '';
  private closed = false;
  /** Frames waiting for their own event-loop turn (see `receive`), with their arrival times. */
  private readonly inbox: Buffer[] = [];
  private readonly arrivals: number[] = [];
  /** A frame was handled this turn: the next ones wait for `next`. */
  private busy = false;
  private paused = false;

  constructor(
    private readonly stream: FrameStream,
    readonly side: 'client' | 'server',
    peerAddress: string,
    private readonly handlers: StreamLinkHandlers,
    /** Stamps each frame's arrival (deadlines count from it): the system's clock. */
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {
    this.peerAddress = peerAddress;
    stream.on('data', (bytes: Buffer) => this.receive(bytes));
    stream.on('error', (err: Error) => this.finish(err));
    stream.on('end', () => this.finish());
    stream.on('close', () => this.finish());
    if (side === 'server')
      stream.on('cancelled', () => this.finish(new Error('peer cancelled the stream')));
  }

  /** True once the stream ended one way or another. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Writes one encoded frame; false when the link is closed. */
  write(frame: Buffer): boolean {
    if (this.closed) return false;
    this.stream.write(frame);
    return true;
  }

  /** Ends the stream in order: frames already written are still delivered. */
  end(): void {
    if (this.closed) return;
    this.stream.end();
    this.finish();
  }

  /** Closes the stream at once with an error status the peer sees. */
  abort(code: grpc.status, details: string): void {
    if (this.closed) return;
    this.inbox.length = 0; // nothing more is delivered from a link we abort
    this.arrivals.length = 0;
    if (this.side === 'client') {
      (this.stream as grpc.ClientDuplexStream<Buffer, Buffer>).cancel();
    } else {
      // grpc-js turns an 'error' on a server stream into that status and ends the call.
      this.stream.emit('error', Object.assign(new Error(details), { code, details }));
    }
    this.finish(new Error(details));
  }

  /**
   * One frame per event-loop turn. Several frames that arrive together (one socket read) would
   * otherwise be handled in one turn, and so would everything they cause: the replies and the
   * requests they release leave only at the end of it, in one wave. Two peers then take turns
   * (lockstep) instead of working at once. A frame that finds the link idle is handled at once
   * (no added latency); the next waits for `next`, after the loop has flushed and read.
   */
  private receive(bytes: Buffer): void {
    if (this.closed) return;
    const receivedAt = this.clock.now();
    if (this.busy) {
      this.inbox.push(bytes);
      this.arrivals.push(receivedAt);
      if (this.inbox.length >= MAX_QUEUED_FRAMES && !this.paused) {
        this.paused = true;
        this.stream.pause();
      }
      return;
    }
    this.busy = true;
    setImmediate(this.next);
    this.handle(bytes, receivedAt);
  }

  /**
   * Handles every waiting frame now: the peer said goodbye on another link, and what it sent
   * before (replies) must be delivered before its requests are failed as unanswered.
   */
  drain(): void {
    for (let bytes = this.inbox.shift(); bytes !== undefined; bytes = this.inbox.shift()) {
      this.handle(bytes, this.arrivals.shift()!);
      if (this.closed) return;
    }
  }

  private readonly next = (): void => {
    const bytes = this.inbox.shift();
    const receivedAt = this.arrivals.shift()!;
    if (bytes === undefined || this.closed) {
      this.busy = false;
      return;
    }
    setImmediate(this.next);
    if (this.paused && this.inbox.length <= MAX_QUEUED_FRAMES / 2) {
      this.paused = false;
      this.stream.resume();
    }
    this.handle(bytes, receivedAt);
  };

  private handle(bytes: Buffer, receivedAt: number): void {
    if (this.closed) return;
    let frame: WireFrame;
    try {
      frame = decodeFrame(bytes);
    } catch (err) {
      this.handlers.onCorruptFrame(this, err as Error);
      this.abort(grpc.status.INVALID_ARGUMENT, `corrupt frame: ${(err as Error).message}`);
      return;
    }
    this.handlers.onFrame(this, frame, receivedAt);
  }

  private finish(error?: Error): void {
    if (this.closed) return;
    // What arrived before the end is delivered first (a reply, then the peer's goodbye).
    this.drain();
    if (this.closed) return;
    this.closed = true;
    if (this.paused) {
      // A paused stream keeps its buffered data and may hold a server's shutdown up.
      this.paused = false;
      this.stream.resume();
    }
    // A server call only completes when we end our half too (else server shutdown waits on it).
    if (this.side === 'server' && this.stream.writable) this.stream.end();
    this.handlers.onClose(this, error);
  }
}

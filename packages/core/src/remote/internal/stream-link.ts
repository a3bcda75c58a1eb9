import * as grpc from '@grpc/grpc-js';
import { LinkLostError, type PeerNotReadingError, RemoteLimitError } from '../../errors';
import { ASSEMBLY_BUFFERS, ChunkAssembler } from './chunk-assembler';
import { RECEIVE_BUFFERS } from './grpc-decoder';
import type { FastPaths } from './grpc-fast-path';
import { decodeChunk, decodeCredit } from './link-frames';
import { UNLIMITED_LINK, type FrameStream, type LinkConfig, type LinkListener } from './link-types';
import { LinkWriter } from './link-writer';
import { watchSilence, type PeerSilence } from './peer-silence';
import { PathProbe } from './path-probe';
import { FRAME_OVERHEAD_BYTES } from './resolve-options';
import type { WireFrame } from './wire';
import { decodeFrame, decodesToCopies } from './wire';

export type { FrameStream, LinkConfig } from './link-types';

/** What a link reports to its owner. */
export interface StreamLinkHandlers {
  /** `receivedAt`: clock.now() when the frame arrived (it may wait for its turn after that). */
  onFrame(link: StreamLink, frame: WireFrame, receivedAt: number): void;
  /** Called once; `error` is absent for an orderly end. */
  onClose(link: StreamLink, error?: Error): void;
  /** A frame could not be decoded; the link closes right after. */
  onCorruptFrame(link: StreamLink, error: Error): void;
  /** The peer exceeded a limit (or stopped reading); the link closes right after. */
  onViolation?(link: StreamLink, error: LinkViolation): void;
}

/** Why a link was closed on the peer's account. */
export type LinkViolation = RemoteLimitError | PeerNotReadingError | LinkLostError;

/**
 * Frames received while one is being handled wait in the link; above this many the stream is
 * paused (HTTP/2 flow control then holds the peer back) and resumed at half.
 */
const MAX_QUEUED_FRAMES = 64;
/** Frames waiting at a turn that mean the link is behind: it handles them all, for a slice. */
const BEHIND_FRAMES = 4;
/** How long a link that is behind may handle waiting frames in one turn. */
const BEHIND_SLICE_MS = 1;
/** The peer is credited at least every this many received bytes (see Credit in remote.proto). */
const CREDIT_STEP_BYTES = 64 * 1024;
/** ...and this long after the last frame, so a quiet link ends fully credited. */
const CREDIT_DELAY_MS = 20;

/**
 * One open Connect stream, client side (we dialled) or server side (the peer dialled). Bounds
 * and decodes incoming frames (joining chunked ones), writes encoded ones through a
 * {@link LinkWriter} (backpressure), and turns the several ways a gRPC stream can end (status,
 * end, cancel, error) into exactly one onClose.
 */
export class StreamLink {
  /** The peer's address once its handshake told us (server side) or we dialled it (client). */
  peerAddress: string;
  /** The member id the peer stated in its handshake (once authenticated). */
  peerMemberId = '';
  /** Whether grpc-js frames this link's chunks in place and joins large messages in reused memory. */
  fastPaths: FastPaths = { send: false, receive: false };
  /** What lives as long as the link: its sender, the route back over it. */
  private readonly listeners: LinkListener[] = [];
  private closed = false;
  private authenticated = false;
  /** Frames waiting for their own event-loop turn (see `receive`), with their arrival times. */
  private readonly inbox: Buffer[] = [];
  private readonly arrivals: number[] = [];
  /** A frame was handled this turn: the next ones wait for `next`. */
  private busy = false;
  private paused = false;
  private readonly assembler: ChunkAssembler;
  /** Frames joined from chunks, not yet delivered: their memory goes back to ASSEMBLY_BUFFERS. */
  private readonly assembled = new Set<Buffer>();
  private readonly writer: LinkWriter;
  /** Bytes received since the handshake, and the part credited to the peer (modulo 2^32). */
  private received = 0;
  private creditedOut = 0;
  private creditTimer: NodeJS.Timeout | undefined = undefined;
  private readonly probe: PathProbe | undefined;
  /**
   * What the link reports its peer's silence to (set by the endpoint that uses the link): the
   * callers deciding where to send read it.
   */
  silence: PeerSilence | undefined = undefined;

  constructor(
    private readonly stream: FrameStream,
    readonly side: 'client' | 'server',
    peerAddress: string,
    private readonly handlers: StreamLinkHandlers,
    readonly config: LinkConfig = UNLIMITED_LINK,
  ) {
    this.peerAddress = peerAddress;
    this.assembler = new ChunkAssembler(config.maxMessageBytes + FRAME_OVERHEAD_BYTES, {
      budget: config.assembly,
      holder: {
        peer: () => this.peerAddress,
        paused: () => this.paused,
        drop: (e) => this.violated(e),
      },
    });
    // Probes take the connect timeout from the probe period: one probe at a time per link.
    this.probe =
      config.linkProbeMs > 0
        ? new PathProbe(
            () => this.peerAddress,
            config.linkProbeMs,
            (silentMs) =>
              this.lose(
                `it credited nothing for ${silentMs} ms while its address was unreachable, and the address answers again`,
              ),
          )
        : undefined;
    this.writer = new LinkWriter(
      stream,
      config,
      () => this.peerAddress,
      (error) => this.violated(error),
      () => {
        for (const l of this.listeners) l.writable();
      },
      config.linkProbeMs > 0 ? watchSilence(this, this.probe) : undefined,
    );
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

  /** True while written frames wait for the stream to drain. */
  get isBlocked(): boolean {
    return this.writer.isBlocked;
  }

  /** Bytes written and not yet taken by the connection. */
  get outstandingBytes(): number {
    return this.writer.outstanding;
  }

  /** How long the peer has credited nothing of what was written to it (see LinkWriter). */
  uncreditedForMs(): number {
    return this.writer.uncreditedForMs(Date.now());
  }

  /** The peer is not reading what waits for it: close with PeerNotReadingError(`detail`). */
  notReading(detail: string): void {
    this.writer.notReading(detail);
  }

  /** Adds something that lives as long as the link (told when it drains and when it ends). */
  listen(listener: LinkListener): void {
    this.listeners.push(listener);
  }

  /** The handshake is done: frames up to maxFrameBytes (and chunks) are accepted now. */
  authenticate(): void {
    this.authenticated = true;
  }

  /**
   * Writes one encoded frame (it waits in the link while the stream is full); false when the
   * link is closed. `done` runs once the frame left for the connection.
   */
  write(frame: Buffer, done?: () => void): boolean {
    if (this.closed) return false;
    const t = this.config.traffic;
    if (t !== undefined) {
      t.framesOut++;
      t.bytesOut += frame.byteLength;
    }
    // Handshake frames are not credited by the peer; everything after is.
    this.writer.write(frame, done, this.authenticated);
    return !this.closed;
  }

  /** The connection is dead though not closed: close the link with LinkLostError(`detail`). */
  lose(detail: string): void {
    this.violated(new LinkLostError(this.peerAddress, detail));
  }

  /** Ends the stream in order: frames already written are still delivered. */
  end(): void {
    if (this.closed) return;
    this.writer.flushAll();
    this.stream.end();
    this.finish();
  }

  /** Closes the stream at once with an error status the peer sees (`cause`: why, for us). */
  abort(code: grpc.status, details: string, cause?: Error): void {
    if (this.closed) return;
    this.inbox.length = 0; // nothing more is delivered from a link we abort
    this.arrivals.length = 0;
    this.assembled.clear();
    if (this.side === 'client') {
      (this.stream as grpc.ClientDuplexStream<Buffer, Buffer>).cancel();
    } else {
      // grpc-js turns an 'error' on a server stream into that status and ends the call.
      this.stream.emit('error', Object.assign(new Error(details), { code, details }));
    }
    this.finish(cause ?? new Error(details));
  }

  /**
   * One frame per event-loop turn (all that wait once the link is behind, see `next`). Several
   * frames that arrive together (one socket read) would otherwise be handled in one turn, and so
   * would everything they cause: the replies and the
   * requests they release leave only at the end of it, in one wave. Two peers then take turns
   * (lockstep) instead of working at once. A frame that finds the link idle is handled at once
   * (no added latency); the next waits for `next`, after the loop has flushed and read.
   *
   * A chunk of a large frame is joined at once and takes no turn: only the frame it completes
   * does, in its place in the order of arrival.
   */
  private receive(bytes: Buffer): void {
    if (this.closed) return;
    const t = this.config.traffic;
    if (t !== undefined) {
      t.framesIn++;
      t.bytesIn += bytes.byteLength;
    }
    const limit = this.authenticated ? this.config.maxFrameBytes : this.config.maxHandshakeBytes;
    if (bytes.byteLength > limit) {
      const option = this.authenticated ? 'limits.maxFrameBytes' : 'limits.maxHandshakeBytes';
      return this.violated(
        new RemoteLimitError(option, `a ${bytes.byteLength}-byte frame is over ${limit} bytes`),
      );
    }
    let frame = bytes;
    if (this.authenticated) {
      try {
        const credit = decodeCredit(bytes);
        if (credit !== undefined) return this.writer.credit(credit);
        this.noteReceived(bytes.byteLength);
        const chunk = decodeChunk(bytes);
        if (chunk !== undefined) {
          const joined = this.assembler.add(chunk);
          // Its data is copied into the frame: the memory grpc-js decoded it into is free.
          RECEIVE_BUFFERS.give(bytes);
          if (joined === undefined) return;
          this.assembled.add(joined);
          frame = joined;
        }
      } catch (err) {
        return this.rejected(err as Error);
      }
    }
    const receivedAt = this.config.clock.now();
    if (this.busy) {
      this.inbox.push(frame);
      this.arrivals.push(receivedAt);
      if (this.inbox.length >= MAX_QUEUED_FRAMES && !this.paused) {
        this.paused = true;
        this.stream.pause();
      }
      return;
    }
    this.busy = true;
    setImmediate(this.next);
    this.handle(frame, receivedAt);
  }

  /** Counts received bytes and credits the peer every CREDIT_STEP_BYTES (or soon after). */
  private noteReceived(bytes: number): void {
    this.received = (this.received + bytes) >>> 0;
    if ((this.received - this.creditedOut) >>> 0 >= CREDIT_STEP_BYTES) this.sendCredit();
    else if (this.creditTimer === undefined) {
      this.creditTimer = setTimeout(this.sendCredit, CREDIT_DELAY_MS);
      this.creditTimer.unref();
    }
  }

  private readonly sendCredit = (): void => {
    if (this.creditTimer) clearTimeout(this.creditTimer);
    this.creditTimer = undefined;
    if (this.closed || this.received === this.creditedOut) return;
    this.creditedOut = this.received;
    this.writer.sendCredit(this.received);
  };

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
    const inbox = this.inbox;
    if (inbox.length === 0 || this.closed) {
      this.busy = false;
      return;
    }
    setImmediate(this.next);
    // Behind (frames arrive faster than one per turn, as when the node is saturated): the
    // waiting frames now, for up to a slice. Left here, and upstream once the stream pauses (the peer's link and
    // HTTP/2 buffers), requests would wait where nothing sees them: their deadlines count from
    // their arrival here, and the node's load control only sees what it was handed. Handled,
    // they wait in mailboxes, where expired ones are dropped and the node sheds what it cannot
    // serve in time. The slice is like the dispatcher's: a burst (a peer that was stopped, then
    // resumed) must not hold the loop and its timers.
    const behind = inbox.length >= BEHIND_FRAMES;
    const clock = this.config.clock;
    const until = behind ? clock.monotonic() + BEHIND_SLICE_MS : 0;
    do {
      this.handle(inbox.shift()!, this.arrivals.shift()!);
    } while (behind && inbox.length > 0 && !this.closed && clock.monotonic() < until);
    if (this.paused && inbox.length <= MAX_QUEUED_FRAMES / 2) {
      this.paused = false;
      this.stream.resume();
    }
  };

  private handle(bytes: Buffer, receivedAt: number): void {
    if (this.closed) return;
    const assembled = this.assembled.size > 0 && this.assembled.delete(bytes);
    let frame: WireFrame;
    try {
      frame = decodeFrame(bytes, this.config);
    } catch (err) {
      return this.rejected(err as Error);
    }
    // A joined frame whose messages keep no view of it serves the next one once delivered;
    // one whose payloads are bytes (delivered as views) stays theirs.
    const reuse = assembled && frame.batch !== undefined && decodesToCopies(frame.batch);
    if (reuse) frame.batch!.reused = true;
    this.handlers.onFrame(this, frame, receivedAt);
    if (reuse) ASSEMBLY_BUFFERS.give(bytes);
  }

  /** A frame that broke a limit or could not be decoded: report it and close the link. */
  private rejected(err: Error): void {
    if (err instanceof RemoteLimitError) return this.violated(err);
    this.handlers.onCorruptFrame(this, err);
    this.abort(grpc.status.INVALID_ARGUMENT, `corrupt frame: ${err.message}`);
  }

  private violated(error: LinkViolation): void {
    if (this.closed) return;
    this.handlers.onViolation?.(this, error);
    const code =
      error instanceof RemoteLimitError ? grpc.status.RESOURCE_EXHAUSTED : grpc.status.UNAVAILABLE;
    this.abort(code, error.message, error);
  }

  private finish(error?: Error): void {
    if (this.closed) return;
    // What arrived before the end is delivered first (a reply, then the peer's goodbye).
    this.drain();
    if (this.closed) return;
    this.closed = true;
    this.assembler.drop();
    this.writer.stop();
    this.probe?.stop();
    if (this.creditTimer) clearTimeout(this.creditTimer);
    if (this.paused) {
      // A paused stream keeps its buffered data and may hold a server's shutdown up.
      this.paused = false;
      this.stream.resume();
    }
    // A server call only completes when we end our half too (else server shutdown waits on it).
    if (this.side === 'server' && this.stream.writable) this.stream.end();
    const reason = error ?? new Error('the link ended');
    for (const l of this.listeners) l.linkClosed(reason);
    this.handlers.onClose(this, error);
  }
}

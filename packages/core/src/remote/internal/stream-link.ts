import * as grpc from '@grpc/grpc-js';
import type { WireFrame } from './wire';
import { decodeFrame } from './wire';

/** Either end of the Connect stream; both carry raw frame bytes. */
export type FrameStream =
  grpc.ClientDuplexStream<Buffer, Buffer> | grpc.ServerDuplexStream<Buffer, Buffer>;

/** What a link reports to its owner. */
export interface StreamLinkHandlers {
  onFrame(link: StreamLink, frame: WireFrame): void;
  /** Called once; `error` is absent for an orderly end. */
  onClose(link: StreamLink, error?: Error): void;
  /** A frame could not be decoded; the link closes right after. */
  onCorruptFrame(link: StreamLink, error: Error): void;
}

/**
 * One open Connect stream, client side (we dialled) or server side (the peer dialled). Decodes
 * incoming frames, writes encoded ones, and turns the several ways a gRPC stream can end
 * (status, end, cancel, error) into exactly one onClose.
 */
export class StreamLink {
  /** The peer's address once its handshake told us (server side) or we dialled it (client). */
  peerAddress: string;
  private closed = false;

  constructor(
    private readonly stream: FrameStream,
    readonly side: 'client' | 'server',
    peerAddress: string,
    private readonly handlers: StreamLinkHandlers,
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
    if (this.side === 'client') {
      (this.stream as grpc.ClientDuplexStream<Buffer, Buffer>).cancel();
    } else {
      // grpc-js turns an 'error' on a server stream into that status and ends the call.
      this.stream.emit('error', Object.assign(new Error(details), { code, details }));
    }
    this.finish(new Error(details));
  }

  private receive(bytes: Buffer): void {
    if (this.closed) return;
    let frame: WireFrame;
    try {
      frame = decodeFrame(bytes);
    } catch (err) {
      this.handlers.onCorruptFrame(this, err as Error);
      this.abort(grpc.status.INVALID_ARGUMENT, `corrupt frame: ${(err as Error).message}`);
      return;
    }
    this.handlers.onFrame(this, frame);
  }

  private finish(error?: Error): void {
    if (this.closed) return;
    this.closed = true;
    // A server call only completes when we end our half too (else server shutdown waits on it).
    if (this.side === 'server' && this.stream.writable) this.stream.end();
    this.handlers.onClose(this, error);
  }
}

import type * as grpc from '@grpc/grpc-js';

/** Either end of the Connect stream; both carry raw frame bytes. */
export type FrameStream =
  grpc.ClientDuplexStream<Buffer, Buffer> | grpc.ServerDuplexStream<Buffer, Buffer>;

/** Something that lives as long as a link (its sender, the route back over it). */
export interface LinkListener {
  /** The link's writes drained: whatever waited for room may be written. */
  writable(): void;
  /** The link ended (`error`: why); called once. */
  linkClosed(error: Error): void;
}

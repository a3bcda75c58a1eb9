import type * as grpc from '@grpc/grpc-js';
import { SYSTEM_CLOCK, type Clock } from '../../clock';
import type { AssemblyBudget } from './assembly-budget';
import { NO_FRAME_LIMITS, type FrameLimits } from './batch-decoder';
import type { RemoteTraffic } from './remote-traffic';

/** Either end of the Connect stream; both carry raw frame bytes. */
export type FrameStream =
  grpc.ClientDuplexStream<Buffer, Buffer> | grpc.ServerDuplexStream<Buffer, Buffer>;

/** Bounds of what one link may have written that the peer has not confirmed (LinkWriter). */
export interface WriterLimits {
  maxOutboundBytes: number;
  writeStallTimeoutMs: number;
  /** Uncredited this long, the peer is `silent` (probed), and again at this period. 0: never. */
  linkProbeMs: number;
}

/** Something that lives as long as a link (its sender, the route back over it). */
export interface LinkListener {
  /** The link's writes drained: whatever waited for room may be written. */
  writable(): void;
  /** The link ended (`error`: why); called once. */
  linkClosed(error: Error): void;
}

/** What a link may receive and hold (RemoteLimits and the outbound bounds), and its clock. */
export interface LinkConfig extends FrameLimits, WriterLimits {
  /** Stamps each frame's arrival (deadlines count from it): the system's clock. */
  clock: Clock;
  /** Largest frame once the peer is authenticated. */
  maxFrameBytes: number;
  /** Largest frame before that. */
  maxHandshakeBytes: number;
  /** Where the link counts its frames and bytes (its node's; none for a link made alone). */
  traffic?: RemoteTraffic | undefined;
  /** What bounds its node's incomplete large messages (none for a link made alone). */
  assembly?: AssemblyBudget | undefined;
}

/** No limits: for tests of the receive path. */
export const UNLIMITED_LINK: LinkConfig = {
  ...NO_FRAME_LIMITS,
  clock: SYSTEM_CLOCK,
  maxFrameBytes: Infinity,
  maxHandshakeBytes: Infinity,
  maxOutboundBytes: Infinity,
  writeStallTimeoutMs: 2 ** 31 - 1,
  linkProbeMs: 0,
};

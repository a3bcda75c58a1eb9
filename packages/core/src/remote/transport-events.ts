import type { Endpoint } from './endpoint';
import type { RemoteStats } from './internal/event-log';
import type { OutboundEnvelope } from './internal/outbound-envelope';
import type { StreamLink } from './internal/stream-link';
import type { WireBatch } from './internal/wire';

/** What the transport hands up to the remote. */
export interface TransportEvents {
  /** A batch from an authenticated link; `receivedAt`: Date.now() when the frame arrived. */
  batch(batch: WireBatch, link: StreamLink, receivedAt: number): void;
  reject(address: string, env: OutboundEnvelope, error: Error): void;
  up(address: string): void;
  down(address: string, error: Error): void;
  /** An endpoint was removed (down too long, or evicted at maxEndpoints). */
  removed(endpoint: Endpoint): void;
  /** True for a request whose requester no longer waits (cancelled, or timed out here). */
  abandoned(env: OutboundEnvelope): boolean;
  /** A request dropped unsent: its deadline passed while its link was blocked. */
  expired(env: OutboundEnvelope): void;
}

/** @deprecated name of {@link RemoteStats}. */
export type TransportStats = RemoteStats;

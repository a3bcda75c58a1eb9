import type { Clock } from '../../clock';
import type { OutboundEnvelope } from './outbound-envelope';

/** What a link's sender needs from its node. */
export interface LinkSenderHost {
  /** The system's clock: deadlines are on it. */
  readonly clock: Clock;
  readonly batchSize: number;
  readonly largeMessageBytes: number;
  readonly maxLargeBytesInFlight: number;
  /** Bytes of small envelopes that may wait for a blocked link (maxOutboundBytes). */
  readonly maxOutboundBytes: number;
  /** An envelope that will never be sent; the host dead-letters it or fails its request. */
  reject(address: string, env: OutboundEnvelope, error: Error): void;
  /** A large message failed with RemoteBackpressureError (counted). */
  backpressure(address: string): void;
  /** True for a request whose requester no longer waits (its future is gone). */
  abandoned(env: OutboundEnvelope): boolean;
  /** A small request was dropped unsent: its deadline passed while the link was blocked. */
  expired(env: OutboundEnvelope): void;
}

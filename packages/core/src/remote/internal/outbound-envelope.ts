import type { PID } from '../../pid';

/** A message serialized for one endpoint, waiting in its batch. */
export interface OutboundEnvelope {
  /** Id of the target actor on the peer. */
  targetId: string;
  typeName: string;
  format: number;
  /** Bytes, or JSON text written into the frame as UTF-8 (then `payloadLength` is set). */
  payload: Uint8Array | string;
  /** The payload's size in bytes (a string's UTF-8 length; for bytes, their byteLength). */
  payloadLength?: number | undefined;
  sender?: PID | undefined;
  header?: Record<string, string> | undefined;
  urgent: boolean;
  /** A request's deadline, epoch ms: sent as the time remaining when the batch is encoded. */
  deadline?: number | undefined;
  /** The message before serialization, kept so a rejected envelope can be dead-lettered. */
  message: unknown;
}

/** Where a remote process hands its envelopes: an endpoint, or the route back over a link. */
export interface EnvelopeSink {
  send(env: OutboundEnvelope): void;
  /** True while sending is known to fail at once (the peer is unreachable). */
  readonly isDown: boolean;
}

/** Shapes of remote.proto messages as encoded and decoded (protobufjs camelCase fields). */

/** Wire shape of a PID. */
export interface WirePid {
  address: string;
  id: string;
}

/** Decoded Handshake frame (the client's first). */
export interface WireHandshake {
  clusterName: string;
  memberId: string;
  address: string;
  protocolVersion: number;
  nonce: Uint8Array;
}

/** Decoded Challenge frame (the server's answer to an acceptable handshake). */
export interface WireChallenge {
  nonce: Uint8Array;
  memberId: string;
  address: string;
}

/** Decoded HandshakeAck frame. */
export interface WireHandshakeAck {
  accepted: boolean;
  reason: string;
  memberId: string;
  address: string;
  /** What was refused (see remote.proto); empty when accepted. */
  refusal: string;
  proof: Uint8Array;
}

/**
 * Decoded envelope of a batch; indexes point into the batch's tables. The payload is
 * `bytes[start, end)`, where `bytes` is the whole received frame (never copied out, see
 * `payloadOf` in wire.ts for the rare caller that needs it as its own array).
 */
export interface WireEnvelope {
  target: number;
  type: number;
  format: number;
  bytes: Uint8Array;
  start: number;
  end: number;
  senderAddress: number;
  senderId: string;
  header?: Record<string, string> | undefined;
  urgent: boolean;
  /** A request's remaining time in ms when it was sent; 0 for none. */
  timeoutMs: number;
}

/** Decoded Batch frame. */
export interface WireBatch {
  typeNames: string[];
  targetIds: string[];
  senderAddresses: string[];
  envelopes: WireEnvelope[];
  /**
   * The frame's memory serves another frame once this batch is delivered (a frame joined from
   * chunks whose messages all decode to copies, JSON or errors: see AssemblyBuffers): nothing
   * delivered may keep a view of it.
   */
  reused?: boolean;
}

/** Decoded Frame: exactly one of the fields is set. */
export interface WireFrame {
  handshake?: WireHandshake;
  handshakeAck?: WireHandshakeAck;
  batch?: WireBatch;
  goodbye?: { address: string };
  challenge?: WireChallenge;
  proof?: { proof: Uint8Array };
}

/** SystemMessage as encoded / decoded. */
export interface WireSystemMessage {
  watch?: WirePid;
  unwatch?: WirePid;
  terminated?: { who?: WirePid; why: string };
  stop?: { why: string };
}

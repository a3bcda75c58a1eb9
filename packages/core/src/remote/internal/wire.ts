import type * as protobuf from 'protobufjs';
import { loadProto } from '../../serialization/internal/proto-files';
import {
  SerializationFormat,
  type SerializationRegistry,
} from '../../serialization/serialization-registry';
import { decodeBatchFrame, NO_FRAME_LIMITS, type FrameLimits } from './batch-decoder';
import type { WireBatch, WireEnvelope, WireFrame } from './wire-types';

/**
 * Bumped on any incompatible change to remote.proto or to what travels in it; peers with another
 * version are refused. 3: the authenticated handshake. 4: errors of registered classes carry
 * their fields, and grain calls are answered with those errors (NotOwnerError, ...) instead of
 * control messages.
 */
export const PROTOCOL_VERSION = 4;

/** The gRPC method both ends of a node pair talk over. */
export const CONNECT_METHOD = '/granary.remote.Remoting/Connect';

/** Envelope `format` of a SystemMessage (above every SerializationFormat value). */
export const SYSTEM_FORMAT = 16;

const root = loadProto('remote.proto');

/** protobufjs types of remote.proto, resolved once per process. */
export const WireTypes = {
  Frame: root.lookupType('granary.remote.Frame'),
  SystemMessage: root.lookupType('granary.remote.SystemMessage'),
  SpawnRequest: root.lookupType('granary.remote.SpawnRequest'),
  SpawnResponse: root.lookupType('granary.remote.SpawnResponse'),
  Pid: root.lookupType('granary.remote.Pid'),
};

/** Registers the remote's own user messages (spawn request / response) in a registry. */
export function registerWireTypes(registry: SerializationRegistry): void {
  registry.registerType(WireTypes.SpawnRequest);
  registry.registerType(WireTypes.SpawnResponse);
  registry.registerType(WireTypes.Pid);
}

export type {
  WireBatch,
  WireChallenge,
  WireEnvelope,
  WireFrame,
  WireHandshake,
  WireHandshakeAck,
  WirePid,
  WireSystemMessage,
} from './wire-types';

/** The payload of a decoded envelope as a view (no copy). */
export function payloadOf(env: WireEnvelope): Uint8Array {
  return env.bytes.subarray(env.start, env.end);
}

/**
 * True when no message of `batch` keeps a view of the frame once decoded: every payload is
 * JSON or an error (decoded into objects and strings). Bytes are delivered as a view of the
 * frame, and so are a protobuf message's bytes fields.
 */
export function decodesToCopies(batch: WireBatch): boolean {
  for (const env of batch.envelopes) {
    if (env.format !== SerializationFormat.Json && env.format !== SerializationFormat.Error) {
      return false;
    }
  }
  return true;
}

/** Encodes one frame for a raw-bytes gRPC write. */
export function encodeFrame(frame: WireFrame): Buffer {
  const bytes = WireTypes.Frame.encode(frame).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Decodes one frame and checks what protobuf cannot: that exactly one kind is set and batch
 * indexes stay inside their tables.
 * @throws Error on bytes that are not a well-formed frame; RemoteLimitError on a batch over
 *   `limits`.
 */
export function decodeFrame(bytes: Uint8Array, limits: FrameLimits = NO_FRAME_LIMITS): WireFrame {
  const fast = decodeBatchFrame(bytes, limits);
  if (fast) {
    checkBatch(fast);
    return { batch: fast };
  }
  const frame = WireTypes.Frame.decode(bytes) as unknown as WireFrame & { kind?: string };
  const kinds =
    (frame.handshake ? 1 : 0) +
    (frame.handshakeAck ? 1 : 0) +
    (frame.batch ? 1 : 0) +
    (frame.goodbye ? 1 : 0) +
    (frame.challenge ? 1 : 0) +
    (frame.proof ? 1 : 0);
  if (kinds !== 1) throw new Error(`frame carries ${kinds} kinds, expected exactly one`);
  // Every batch we write is exactly one field (the fast path above decodes it with the
  // limits); one in another layout is no frame of ours.
  if (frame.batch) throw new Error('a batch frame with other fields');
  return frame;
}

function checkBatch(batch: WireBatch): void {
  for (const env of batch.envelopes) {
    if (env.target >= batch.targetIds.length || env.type >= batch.typeNames.length) {
      throw new Error('batch envelope points outside its string tables');
    }
    if (env.senderAddress > batch.senderAddresses.length) {
      throw new Error('batch envelope sender points outside the address table');
    }
  }
}

/** Encodes a protobufjs message of remote.proto. */
export function encodeWith(type: protobuf.Type, value: object): Uint8Array {
  return type.encode(value).finish();
}

import * as protobuf from 'protobufjs';
import { RemoteLimitError } from '../../errors';
import type { WireBatch, WireEnvelope } from './wire-types';

/** What one received frame may hold (RemoteLimits, with maxMessageBytes per payload). */
export interface FrameLimits {
  maxEnvelopesPerFrame: number;
  maxStringBytes: number;
  maxHeaderEntries: number;
  maxHeaderBytes: number;
  maxMessageBytes: number;
}

/** No bounds: for tests and tools that decode frames they made themselves. */
export const NO_FRAME_LIMITS: FrameLimits = {
  maxEnvelopesPerFrame: Infinity,
  maxStringBytes: Infinity,
  maxHeaderEntries: Infinity,
  maxHeaderBytes: Infinity,
  maxMessageBytes: Infinity,
};

/** A frame that is exactly one batch starts with this tag (Frame field 3, length-delimited). */
export const FRAME_BATCH_TAG = (3 << 3) | 2;

/**
 * Decodes `Frame { batch }` by hand: the hot path of every node, where protobufjs' generic
 * decoder would build a message object with prototype defaults and a payload view per
 * envelope (envelopes here point into `bytes` instead). Returns
 * undefined when the frame holds anything but one batch (the caller then decodes it
 * generically).
 * @throws Error on malformed bytes (truncated, bad wire types); RemoteLimitError when the
 *   frame holds more than `limits` allow (checked before the bytes are decoded).
 */
export function decodeBatchFrame(
  bytes: Uint8Array,
  limits: FrameLimits = NO_FRAME_LIMITS,
): WireBatch | undefined {
  const r = protobuf.Reader.create(bytes);
  if (r.len === 0 || r.uint32() !== FRAME_BATCH_TAG) return undefined;
  const end = r.uint32() + r.pos;
  if (end !== r.len) return undefined;
  const batch: WireBatch = { typeNames: [], targetIds: [], senderAddresses: [], envelopes: [] };
  while (r.pos < end) {
    const tag = r.uint32();
    switch (tag) {
      case (1 << 3) | 2:
        batch.typeNames.push(boundedString(r, limits.maxStringBytes));
        break;
      case (2 << 3) | 2:
        batch.targetIds.push(boundedString(r, limits.maxStringBytes));
        break;
      case (3 << 3) | 2:
        batch.senderAddresses.push(boundedString(r, limits.maxStringBytes));
        break;
      case (4 << 3) | 2:
        if (batch.envelopes.length >= limits.maxEnvelopesPerFrame) {
          throw new RemoteLimitError(
            'limits.maxEnvelopesPerFrame',
            `a frame holds more than ${limits.maxEnvelopesPerFrame} envelopes`,
          );
        }
        batch.envelopes.push(decodeEnvelope(r, bytes, r.uint32() + r.pos, limits));
        break;
      default:
        r.skipType(tag & 7);
    }
  }
  if (r.pos !== end) throw new Error('batch overruns its frame');
  return batch;
}

function decodeEnvelope(
  r: protobuf.Reader,
  bytes: Uint8Array,
  end: number,
  limits: FrameLimits,
): WireEnvelope {
  const env: WireEnvelope = {
    target: 0,
    type: 0,
    format: 0,
    bytes,
    start: 0,
    end: 0,
    senderAddress: 0,
    senderId: '',
    header: undefined,
    urgent: false,
    timeoutMs: 0,
  };
  let headerEntries = 0;
  let headerBytes = 0;
  while (r.pos < end) {
    const tag = r.uint32();
    switch (tag) {
      case 1 << 3:
        env.target = r.uint32();
        break;
      case 2 << 3:
        env.type = r.uint32();
        break;
      case 3 << 3:
        env.format = r.uint32();
        break;
      case (4 << 3) | 2: {
        // Where the payload is, not a copy or a view object: it is decoded from the frame.
        const length = r.uint32();
        if (length > limits.maxMessageBytes) {
          throw new RemoteLimitError(
            'maxMessageBytes',
            `a ${length}-byte message is over ${limits.maxMessageBytes} bytes`,
          );
        }
        env.start = r.pos;
        env.end = r.pos + length;
        r.skip(length);
        break;
      }
      case 5 << 3:
        env.senderAddress = r.uint32();
        break;
      case (6 << 3) | 2:
        env.senderId = boundedString(r, limits.maxStringBytes);
        break;
      case (7 << 3) | 2: {
        const entryEnd = r.uint32() + r.pos;
        headerEntries++;
        headerBytes += entryEnd - r.pos;
        if (headerEntries > limits.maxHeaderEntries || headerBytes > limits.maxHeaderBytes) {
          throw new RemoteLimitError(
            headerEntries > limits.maxHeaderEntries
              ? 'limits.maxHeaderEntries'
              : 'limits.maxHeaderBytes',
            `an envelope's header is over ${limits.maxHeaderEntries} entries or ${limits.maxHeaderBytes} bytes`,
          );
        }
        readHeader(r, entryEnd, (env.header ??= {}));
        break;
      }
      case 8 << 3:
        env.urgent = r.bool();
        break;
      case 9 << 3:
        env.timeoutMs = r.uint32();
        break;
      default:
        r.skipType(tag & 7);
    }
  }
  if (r.pos !== end) throw new Error('envelope overruns its batch');
  return env;
}

function readHeader(r: protobuf.Reader, end: number, header: Record<string, string>): void {
  let key = '';
  let value = '';
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === ((1 << 3) | 2)) key = r.string();
    else if (tag === ((2 << 3) | 2)) value = r.string();
    else r.skipType(tag & 7);
  }
  header[key] = value;
}

/** A length-delimited string, refused before decoding if it is longer than `max` bytes. */
function boundedString(r: protobuf.Reader, max: number): string {
  const start = r.pos;
  const length = r.uint32();
  if (length > max) {
    throw new RemoteLimitError('limits.maxStringBytes', `a ${length}-byte string in a frame`);
  }
  r.pos = start;
  return r.string();
}

import * as protobuf from 'protobufjs';
import { FUTURE_PREFIX } from '../../process-registry';
import type { OutboundEnvelope } from './outbound-envelope';

// Field tags of remote.proto (field number << 3 | wire type), written by hand on the hot path.
const FRAME_BATCH = (3 << 3) | 2;
const BATCH_TYPE_NAMES = (1 << 3) | 2;
const BATCH_TARGET_IDS = (2 << 3) | 2;
const BATCH_SENDER_ADDRESSES = (3 << 3) | 2;
const BATCH_ENVELOPES = (4 << 3) | 2;
const ENV_TARGET = 1 << 3;
const ENV_TYPE = 2 << 3;
const ENV_FORMAT = 3 << 3;
const ENV_PAYLOAD = (4 << 3) | 2;
const ENV_SENDER_ADDRESS = 5 << 3;
const ENV_SENDER_ID = (6 << 3) | 2;
const ENV_HEADER = (7 << 3) | 2;
const ENV_URGENT = 8 << 3;
const MAP_KEY = (1 << 3) | 2;
const MAP_VALUE = (2 << 3) | 2;

/**
 * Coalesces envelopes for one endpoint into one `Frame { batch }` of remote.proto. Type names,
 * target ids and sender addresses repeat a lot (one actor talking to another), so each is
 * written once per batch in a table and envelopes carry indexes. Envelopes are encoded as they
 * are added, straight into the frame's writer (no intermediate objects); the tables follow
 * them at take() (protobuf fields may come in any order).
 */
export class BatchBuilder {
  private typeNames: string[] = [];
  private typeIndex = new Map<string, number>();
  private targetIds: string[] = [];
  private targetIndex = new Map<string, number>();
  private senderAddresses: string[] = [];
  private senderIndex = new Map<string, number>();
  private sources: OutboundEnvelope[] = [];
  private payloadBytes = 0;
  private writer = BatchBuilder.startFrame();

  private static startFrame(): protobuf.Writer {
    return protobuf.Writer.create().uint32(FRAME_BATCH).fork();
  }

  /** Envelopes in the current batch. */
  get count(): number {
    return this.sources.length;
  }

  /** Sum of the payload sizes in the current batch. */
  get bytes(): number {
    return this.payloadBytes;
  }

  add(env: OutboundEnvelope): void {
    const w = this.writer.uint32(BATCH_ENVELOPES).fork();
    // A reply's target is a future id, unique per request: a table entry without a lookup.
    const target = env.targetId.startsWith(FUTURE_PREFIX)
      ? this.targetIds.push(env.targetId) - 1
      : indexOf(this.targetIds, this.targetIndex, env.targetId);
    if (target !== 0) w.uint32(ENV_TARGET).uint32(target);
    const type = indexOf(this.typeNames, this.typeIndex, env.typeName);
    if (type !== 0) w.uint32(ENV_TYPE).uint32(type);
    if (env.format !== 0) w.uint32(ENV_FORMAT).uint32(env.format);
    w.uint32(ENV_PAYLOAD).bytes(env.payload);
    const sender = env.sender;
    if (sender !== undefined) {
      w.uint32(ENV_SENDER_ADDRESS).uint32(
        1 + indexOf(this.senderAddresses, this.senderIndex, sender.address),
      );
      w.uint32(ENV_SENDER_ID).string(sender.id);
    }
    const header = env.header;
    if (header !== undefined) {
      for (const key in header) {
        w.uint32(ENV_HEADER)
          .fork()
          .uint32(MAP_KEY)
          .string(key)
          .uint32(MAP_VALUE)
          .string(header[key]!)
          .ldelim();
      }
    }
    if (env.urgent) w.uint32(ENV_URGENT).bool(true);
    w.ldelim();
    this.sources.push(env);
    this.payloadBytes += env.payload.byteLength;
  }

  /** Drops the current batch unsent and returns its envelopes, so they can be rejected. */
  discard(): OutboundEnvelope[] {
    const sources = this.sources;
    this.reset();
    return sources;
  }

  /** Encodes the batch as one frame and starts an empty one. */
  take(): Buffer {
    const w = this.writer;
    for (const s of this.typeNames) w.uint32(BATCH_TYPE_NAMES).string(s);
    for (const s of this.targetIds) w.uint32(BATCH_TARGET_IDS).string(s);
    for (const s of this.senderAddresses) w.uint32(BATCH_SENDER_ADDRESSES).string(s);
    const bytes = w.ldelim().finish();
    this.reset();
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  private reset(): void {
    this.typeNames = [];
    this.typeIndex = new Map();
    this.targetIds = [];
    this.targetIndex = new Map();
    this.senderAddresses = [];
    this.senderIndex = new Map();
    this.sources = [];
    this.payloadBytes = 0;
    this.writer = BatchBuilder.startFrame();
  }
}

function indexOf(table: string[], index: Map<string, number>, value: string): number {
  let i = index.get(value);
  if (i === undefined) {
    i = table.length;
    table.push(value);
    index.set(value, i);
  }
  return i;
}

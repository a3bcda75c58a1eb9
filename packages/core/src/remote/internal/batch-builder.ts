import { SYSTEM_CLOCK, type Clock } from '../../clock';
import { FUTURE_PREFIX } from '../../internal/future-ids';
import { ByteWriter, lengthDelimitedSize, utf8Length, varintSize } from './byte-writer';
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
const ENV_TIMEOUT = 9 << 3;
const MAP_KEY = (1 << 3) | 2;
const MAP_VALUE = (2 << 3) | 2;

/** The longest timeout sent (a uint32 field): ~49 days, longer is as good as none. */
const MAX_TIMEOUT_MS = 0xffffffff;
/** Room for the Frame tag and the batch's length varint, written once the batch is complete. */
const FRAME_HEADROOM = 6;
/** First buffer of a batch; later batches start at the size of the previous one. */
const INITIAL_CAPACITY = 4096;

/**
 * Coalesces envelopes for one endpoint into one `Frame { batch }` of remote.proto. Type names,
 * target ids and sender addresses repeat a lot (one actor talking to another), so each is
 * written once per batch in a table and envelopes carry indexes. Envelopes are encoded as they
 * are added, straight into the frame's buffer (no intermediate objects); the tables follow
 * them at take() (protobuf fields may come in any order).
 */
export class BatchBuilder {
  private readonly typeNames = new StringTable();
  private readonly targetIds = new StringTable();
  private readonly senderAddresses = new StringTable();
  private sources: OutboundEnvelope[] = [];
  private payloadBytes = 0;
  /** clock.now() at the first deadline encoded in this batch. */
  private now: number | undefined = undefined;
  private capacity = INITIAL_CAPACITY;
  private writer: ByteWriter;

  constructor(
    /** Deadlines go as the time left on this clock (the system's). */
    private readonly clock: Clock = SYSTEM_CLOCK,
    /** The first frame's buffer: bytes to allocate, or memory to write into. */
    first: number | Buffer = INITIAL_CAPACITY,
  ) {
    this.writer = new ByteWriter(first, FRAME_HEADROOM);
  }

  /** Envelopes in the current batch. */
  get count(): number {
    return this.sources.length;
  }

  /** Bytes the current batch's envelopes take so far (its tables come at take()). */
  get byteLength(): number {
    return this.writer.length;
  }

  /** Sum of the payload sizes in the current batch. */
  get bytes(): number {
    return this.payloadBytes;
  }

  add(env: OutboundEnvelope): void {
    // A reply's target is a future id, unique per request: a table entry without a lookup.
    const target = env.targetId.startsWith(FUTURE_PREFIX)
      ? this.targetIds.append(env.targetId)
      : this.targetIds.indexOf(env.targetId);
    const type = this.typeNames.indexOf(env.typeName);
    const payload = env.payload;
    const payloadLength =
      typeof payload === 'string' ? env.payloadLength! : (env.payloadLength ?? payload.byteLength);
    const sender = env.sender;
    const senderAddress =
      sender === undefined ? 0 : 1 + this.senderAddresses.indexOf(sender.address);
    const senderIdLength = sender === undefined ? 0 : utf8Length(sender.id);
    const header = env.header;

    let size = 1 + lengthDelimitedSize(payloadLength);
    if (target !== 0) size += 1 + varintSize(target);
    if (type !== 0) size += 1 + varintSize(type);
    if (env.format !== 0) size += 1 + varintSize(env.format);
    if (sender !== undefined)
      size += 1 + varintSize(senderAddress) + 1 + lengthDelimitedSize(senderIdLength);
    let entries: number[] | undefined;
    if (header !== undefined) {
      entries = [];
      for (const key in header) {
        const k = utf8Length(key);
        const v = utf8Length(header[key]!);
        const entry = 1 + lengthDelimitedSize(k) + 1 + lengthDelimitedSize(v);
        entries.push(k, v, entry);
        size += 1 + lengthDelimitedSize(entry);
      }
    }
    if (env.urgent) size += 2;
    const timeout = env.deadline === undefined ? 0 : this.remainingMs(env.deadline);
    if (timeout !== 0) size += 1 + varintSize(timeout);

    const w = this.writer;
    w.ensure(1 + 5 + size);
    w.byte(BATCH_ENVELOPES);
    w.varint(size);
    if (target !== 0) {
      w.byte(ENV_TARGET);
      w.varint(target);
    }
    if (type !== 0) {
      w.byte(ENV_TYPE);
      w.varint(type);
    }
    if (env.format !== 0) {
      w.byte(ENV_FORMAT);
      w.varint(env.format);
    }
    w.byte(ENV_PAYLOAD);
    if (typeof payload === 'string') w.string(payload, payloadLength);
    else w.bytes(payload);
    if (sender !== undefined) {
      w.byte(ENV_SENDER_ADDRESS);
      w.varint(senderAddress);
      w.byte(ENV_SENDER_ID);
      w.string(sender.id, senderIdLength);
    }
    if (header !== undefined) {
      let i = 0;
      for (const key in header) {
        w.byte(ENV_HEADER);
        w.varint(entries![i + 2]!);
        w.byte(MAP_KEY);
        w.string(key, entries![i]!);
        w.byte(MAP_VALUE);
        w.string(header[key]!, entries![i + 1]!);
        i += 3;
      }
    }
    if (env.urgent) {
      w.byte(ENV_URGENT);
      w.byte(1);
    }
    if (timeout !== 0) {
      w.byte(ENV_TIMEOUT);
      w.varint(timeout);
    }
    this.sources.push(env);
    this.payloadBytes += payloadLength;
  }

  /**
   * A deadline as the ms left (at least 1: an expired request still travels, its target
   * decides), 0 for none. The clock is read once per batch: the batch is sent within the turn.
   */
  private remainingMs(deadline: number): number {
    if (!(deadline < Infinity)) return 0;
    const left = Math.ceil(deadline - (this.now ??= this.clock.now()));
    return left < 1 ? 1 : left > MAX_TIMEOUT_MS ? MAX_TIMEOUT_MS : left;
  }

  /** Drops the current batch unsent and returns its envelopes, so they can be rejected. */
  discard(): OutboundEnvelope[] {
    const sources = this.sources;
    this.reset();
    return sources;
  }

  /**
   * Encodes the batch as one frame and starts an empty one (`again`: false for a builder of one
   * frame, which allocates nothing more and must not be used after).
   */
  take(again = true): Buffer {
    const w = this.writer;
    writeTable(w, BATCH_TYPE_NAMES, this.typeNames.values);
    writeTable(w, BATCH_TARGET_IDS, this.targetIds.values);
    writeTable(w, BATCH_SENDER_ADDRESSES, this.senderAddresses.values);
    const prefix = Buffer.allocUnsafe(1 + varintSize(w.length));
    prefix[0] = FRAME_BATCH;
    let v = w.length;
    let i = 1;
    while (v > 127) {
      prefix[i++] = (v & 127) | 128;
      v >>>= 7;
    }
    prefix[i] = v;
    this.capacity = Math.max(INITIAL_CAPACITY, w.length + FRAME_HEADROOM);
    const frame = w.finish(prefix);
    if (again) this.reset();
    return frame;
  }

  private reset(): void {
    this.typeNames.clear();
    this.targetIds.clear();
    this.senderAddresses.clear();
    this.sources = [];
    this.payloadBytes = 0;
    this.now = undefined;
    this.writer = new ByteWriter(this.capacity, FRAME_HEADROOM);
  }
}

function writeTable(w: ByteWriter, tag: number, table: string[]): void {
  for (const s of table) {
    // Table strings are ids and names, nearly always short ASCII: one pass, no length first.
    w.ensure(1 + 1 + s.length);
    w.byte(tag);
    if (w.asciiString(s)) continue;
    const n = utf8Length(s);
    w.ensure(5 + n);
    w.string(s, n);
  }
}

/**
 * The strings of one table of a batch (type names, target ids, sender addresses) and their
 * indexes. Consecutive envelopes mostly repeat the last string (one actor talking to another),
 * which is answered without a Map lookup.
 */
class StringTable {
  values: string[] = [];
  private readonly index = new Map<string, number>();
  private last: string | undefined = undefined;
  private lastIndex = 0;

  /** The index of `value`, appended if new. */
  indexOf(value: string): number {
    if (value === this.last) return this.lastIndex;
    let i = this.index.get(value);
    if (i === undefined) {
      i = this.values.length;
      this.values.push(value);
      this.index.set(value, i);
    }
    this.last = value;
    this.lastIndex = i;
    return i;
  }

  /** Appends `value` without looking for it (a string known to be unique in the batch). */
  append(value: string): number {
    return this.values.push(value) - 1;
  }

  clear(): void {
    // A new array: the frame just taken no longer needs the old one, and a shrunk array is cheap.
    this.values = [];
    this.index.clear();
    this.last = undefined;
  }
}

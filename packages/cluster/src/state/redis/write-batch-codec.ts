import { ReplyError } from 'ioredis';
import { REPLY_ERROR, REPLY_LOST } from './scripts';

/** One write of a batch: the fencing arguments and the state bytes. */
export interface BatchedWrite {
  /** The expected version, -1 for none. */
  expected: number;
  epoch: number;
  bytes: Buffer;
}

/**
 * `[code, value]` of one write, as WRITE_SCRIPT replies (see scripts.ts); codes REPLY_LOST and
 * REPLY_MARKED add the newest acknowledged version.
 */
export type WriteReply = [code: number, value: number, seen?: number];

/** Bytes of a record's fixed part: expected (double), epoch (double), state length (uint32). */
const RECORD_HEAD = 20;
/** Bytes of a reply entry: code (byte) and value (double). */
const REPLY_ENTRY = 9;

/**
 * Packs the writes into WRITE_MANY_SCRIPT's one argument: per write, big-endian doubles for
 * expected and epoch (exact: both are safe integers), a uint32 state length and the state.
 */
export function encodeWriteBatch(writes: readonly BatchedWrite[]): Buffer {
  let size = 0;
  for (const w of writes) size += RECORD_HEAD + w.bytes.length;
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const w of writes) {
    at = out.writeDoubleBE(w.expected, at);
    at = out.writeDoubleBE(w.epoch, at);
    at = out.writeUInt32BE(w.bytes.length, at);
    at += w.bytes.copy(out, at);
  }
  return out;
}

/**
 * Unpacks WRITE_MANY_SCRIPT's reply: one `[code, value, seen?]` per write, or the ReplyError Redis
 * gave for that write (the same error the single-write script would have failed with).
 */
export function decodeWriteBatchReply(reply: Buffer, count: number): (WriteReply | Error)[] {
  const out = new Array<WriteReply | Error>(count);
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (at + REPLY_ENTRY > reply.length) {
      throw new Error(`state write batch: reply has ${i} of ${count} results`);
    }
    const code = reply[at]!;
    const value = reply.readDoubleBE(at + 1);
    at += REPLY_ENTRY;
    if (code >= REPLY_LOST) {
      out[i] = [code, value, reply.readDoubleBE(at)];
      at += 8;
    } else if (code === REPLY_ERROR) {
      const length = reply.readUInt32BE(at);
      out[i] = new ReplyError(reply.toString('utf8', at + 4, at + 4 + length));
      at += 4 + length;
    } else {
      out[i] = [code, value];
    }
  }
  return out;
}

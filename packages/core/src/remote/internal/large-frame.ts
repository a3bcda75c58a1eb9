import type { Clock } from '../../clock';
import { BatchBuilder } from './batch-builder';
import type { OutboundEnvelope } from './outbound-envelope';

/** Room for the envelope's ids, type name, headers and the frame's tables beside its payload. */
const ENVELOPE_SLACK_BYTES = 4096;
/**
 * Smallest buffer kept for reuse. Below it allocation is cheap, and a Buffer of under 4 KiB may
 * be a slice of Node's shared pool, which must never be written to by another frame.
 */
const MIN_SPARE_BYTES = 64 * 1024;

/**
 * One buffer per process that served a large frame whose bytes were all copied into chunks,
 * kept for the next large frame. Each large frame otherwise allocated its size anew (a 1 MiB
 * message, 1 MiB): with large messages back to back, those allocations drove V8's external
 * memory accounting into a full garbage collection every few messages, which paused every
 * small call too. One buffer, at most the largest frame sent (maxMessageBytes and its
 * envelope), bounds what this keeps.
 */
let spare: Buffer | undefined = undefined;

/** Encodes a large message as its own one-envelope batch frame, into the spare if it fits. */
export function encodeLargeFrame(
  env: OutboundEnvelope,
  clock: Clock,
  payloadBytes: number,
): Buffer {
  const needed = payloadBytes + ENVELOPE_SLACK_BYTES;
  let memory: number | Buffer = needed;
  if (spare !== undefined && spare.byteLength >= needed) {
    memory = spare;
    spare = undefined;
  }
  const builder = new BatchBuilder(clock, memory);
  builder.add(env);
  return builder.take(false);
}

/**
 * The frame's bytes were all copied out (into chunks): its memory may serve the next large
 * frame. Nothing may read `frame` after this.
 */
export function recycleLargeFrame(frame: Buffer): void {
  const memory = frame.buffer;
  if (memory.byteLength < MIN_SPARE_BYTES) return;
  if (spare !== undefined && spare.byteLength >= memory.byteLength) return;
  spare = Buffer.from(memory);
}

import { randomFillSync } from 'node:crypto';

/** What every request's future id starts with. */
export const FUTURE_PREFIX = 'f$';

/** Slots of the future table: two base64url characters of a future id name one. */
export const FUTURE_SLOTS = 4096;

/**
 * Random bytes of one token: 48 bits, 8 base64url characters. With the prefix and two
 * characters of slot, a future id is 12 characters: under 13, V8 keeps it a flat string, where
 * a longer id is a rope that every encode, length count and lookup walks (a 72-bit token in a
 * `f$<seq>.<token>` id cost remote requests up to ~25% between two processes).
 *
 * Strength: a peer that holds the secret and guesses ids at a million a second, with all 4,096
 * slots pending, hits one pending request once in 2^48 / 10^6 s (~9 years); with a thousand
 * pending, once in ~36 years. Each miss is a dead letter (`not-found`).
 */
const TOKEN_BYTES = 6;
const TOKEN_CHARS = (TOKEN_BYTES / 3) * 4;
/** A future id's length: prefix, slot, token. */
const FUTURE_ID_LENGTH = FUTURE_PREFIX.length + 2 + TOKEN_CHARS;
/**
 * Tokens drawn per call into the system's random source: 6 KiB a fill. A fill's fixed cost
 * (the crypto job, the Buffer, the base64url text) is shared by this many requests: 1,024
 * made an id in ~37 ns where 256 took ~55 ns (this machine, 3M ids), a share of every remote
 * request's CPU; 4,096 gains no more.
 */
const TOKENS_PER_FILL = 1024;

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** `f$` and a slot's two characters, one string per slot (one concatenation per id). */
const SLOT_PREFIXES = Array.from(
  { length: FUTURE_SLOTS },
  (_, slot) => FUTURE_PREFIX + ALPHABET[slot >> 6]! + ALPHABET[slot & 63]!,
);
/** A character code's base64url value; -1 for anything else (ASCII only). */
const DIGITS = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DIGITS[ALPHABET.charCodeAt(i)] = i;

/**
 * Makes and reads request future ids: `f$<slot><token>`, the table slot in two characters and
 * a random token in eight. A sequence number alone would be a guess away: any peer that
 * authenticated (a GranaryClient holding the secret) could send a reply to every id and settle
 * this node's pending requests to other nodes, grain calls among them, with answers of its
 * choosing. The token makes the id a capability: only whoever was sent the request (or is
 * handed its sender) can answer it.
 */
export class FutureIds {
  private text = '';
  private next = 0;

  /** A fresh id for the future in `slot` (its token is never reused). */
  make(slot: number): string {
    if (this.next === this.text.length) {
      this.text = randomFillSync(Buffer.allocUnsafe(TOKEN_BYTES * TOKENS_PER_FILL)).toString(
        'base64url',
      );
      this.next = 0;
    }
    const start = this.next;
    this.next = start + TOKEN_CHARS;
    // Both parts are under 13 characters, and so is the sum: V8 makes each a flat string.
    return SLOT_PREFIXES[slot]! + this.text.slice(start, this.next);
  }
}

/** The table slot a future id names; -1 if `id` is not one's shape (any string may arrive). */
export function futureSlotOf(id: string): number {
  if (id.length !== FUTURE_ID_LENGTH) return -1;
  const hi = id.charCodeAt(2);
  const lo = id.charCodeAt(3);
  if (hi > 127 || lo > 127) return -1;
  const h = DIGITS[hi]!;
  const l = DIGITS[lo]!;
  return h < 0 || l < 0 ? -1 : (h << 6) | l;
}

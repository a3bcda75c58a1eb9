import { randomFillSync } from 'node:crypto';

/**
 * Random bytes of one token: 72 bits, 12 base64url characters. A peer guessing at a million ids
 * a second, with a thousand requests pending for 10 s each, hits one in about 2^72 / 10^10 tries
 * (it would take ~10^5 years).
 */
const TOKEN_BYTES = 9;
const TOKEN_CHARS = (TOKEN_BYTES / 3) * 4;
/** Tokens drawn per call into the system's random source (~30 ns a token instead of ~1 µs). */
const TOKENS_PER_FILL = 256;

/**
 * The secret part of a request's future id (`f$<seq>.<token>`). A sequence number alone is a
 * guess away: any peer that authenticated (a GranaryClient holding the secret) could send a reply
 * to `f$1` ... `f$N` and settle this node's pending requests to other nodes, grain calls among
 * them, with answers of its choosing. The token makes the id a capability: only whoever was sent
 * the request (or is handed its sender) can answer it.
 */
export class FutureTokens {
  private text = '';
  private next = 0;

  /** A fresh token (never reused). */
  take(): string {
    if (this.next === this.text.length) {
      this.text = randomFillSync(Buffer.allocUnsafe(TOKEN_BYTES * TOKENS_PER_FILL)).toString(
        'base64url',
      );
      this.next = 0;
    }
    const start = this.next;
    this.next = start + TOKEN_CHARS;
    // Under 13 characters: V8 copies the slice into a flat string of its own.
    return this.text.slice(start, this.next);
  }
}

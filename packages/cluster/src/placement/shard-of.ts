import { InvalidArgumentError } from '@granary/core';

/** FNV-1a 32-bit offset basis. */
const FNV_OFFSET = 0x811c9dc5;
/** FNV-1a 32-bit prime. */
const FNV_PRIME = 0x01000193;

/**
 * FNV-1a (32 bit) of the UTF-8 bytes of `text` (from index `from` on: a grain id's identity is
 * hashed in place), encoded on the fly so no buffer is allocated. Stable across processes,
 * platforms and Node versions: every member maps an identity to the same shard.
 */
export function fnv1a32(text: string, from = 0): number {
  let h = FNV_OFFSET;
  for (let i = from; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) {
      h = Math.imul(h ^ c, FNV_PRIME);
      continue;
    }
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
        i++;
      }
    }
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd; // a lone surrogate encodes as U+FFFD, like Buffer
    if (c < 0x800) {
      h = Math.imul(h ^ (0xc0 | (c >> 6)), FNV_PRIME);
    } else if (c < 0x10000) {
      h = Math.imul(h ^ (0xe0 | (c >> 12)), FNV_PRIME);
      h = Math.imul(h ^ (0x80 | ((c >> 6) & 0x3f)), FNV_PRIME);
    } else {
      h = Math.imul(h ^ (0xf0 | (c >> 18)), FNV_PRIME);
      h = Math.imul(h ^ (0x80 | ((c >> 12) & 0x3f)), FNV_PRIME);
      h = Math.imul(h ^ (0x80 | ((c >> 6) & 0x3f)), FNV_PRIME);
    }
    h = Math.imul(h ^ (0x80 | (c & 0x3f)), FNV_PRIME);
  }
  return h >>> 0;
}

/**
 * The shard of a grain identity: FNV-1a of its UTF-8 bytes modulo `shardCount`.
 *
 * @example
 * shardOf('player-42', 256); // always the same number in 0..255, on every member
 */
export function shardOf(identity: string, shardCount: number): number {
  if (!Number.isInteger(shardCount) || shardCount < 1) {
    throw new InvalidArgumentError('shardCount', `must be an integer >= 1, got ${shardCount}`);
  }
  return fnv1a32(identity) % shardCount;
}

/**
 * fnv1a32(`${prefix}${n}`) for a non-negative integer n, given fnv1a32(prefix), without
 * building the string (FNV-1a goes byte by byte, so the prefix's hash is the state to go on
 * from): the ring positions of a kind's 16,384 ranges hash `<kind>/<range>` each.
 */
export function fnv1a32WithNumber(prefixHash: number, n: number): number {
  let h = prefixHash;
  let p = 1;
  while (p * 10 <= n) p *= 10;
  for (; p >= 1; p /= 10) h = Math.imul(h ^ (0x30 + (Math.floor(n / p) % 10)), FNV_PRIME);
  return h >>> 0;
}

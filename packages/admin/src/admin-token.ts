import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { AdminConfigError } from './errors';

/** Shortest token accepted: 16 bytes of entropy or more, like the remote's secrets. */
export const MIN_TOKEN_LENGTH = 16;

/** A fresh token: 24 random bytes, base64url (32 characters). */
export function generateToken(): string {
  return randomBytes(24).toString('base64url');
}

/** True when `host` only listens on this machine. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  return h === '::1';
}

/**
 * The token the admin API requires: the one given (at least MIN_TOKEN_LENGTH characters), or,
 * on a loopback address only, a generated one (`generated: true`: the caller prints it once).
 */
export function resolveToken(
  given: string | undefined,
  host: string,
): { token: string; generated: boolean } {
  if (given !== undefined) {
    if (typeof given !== 'string' || given.length < MIN_TOKEN_LENGTH) {
      throw new AdminConfigError(
        `admin token must be a string of at least ${MIN_TOKEN_LENGTH} characters`,
      );
    }
    return { token: given, generated: false };
  }
  if (!isLoopback(host)) {
    throw new AdminConfigError(
      `the admin API would listen on ${host} (not loopback) without a token: give admin.token ` +
        '(GRANARY_ADMIN_TOKEN) or bind the ops server to 127.0.0.1',
    );
  }
  return { token: generateToken(), generated: true };
}

/**
 * Checks an `Authorization: Bearer <token>` header in constant time: both sides are hashed
 * first, so neither the token's length nor its prefix shows in the timing.
 */
export class TokenCheck {
  private readonly digest: Buffer;

  constructor(token: string) {
    this.digest = sha256(token);
  }

  matches(header: string | undefined): boolean {
    if (typeof header !== 'string') return false;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const presented = sha256(m === null ? '' : m[1]!);
    return timingSafeEqual(presented, this.digest) && m !== null;
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

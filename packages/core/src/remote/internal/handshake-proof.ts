import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { PROTOCOL_VERSION } from './wire';

/** Bytes of each side's nonce: enough that a nonce never repeats. */
export const NONCE_BYTES = 32;

/** Everything both sides stated in one handshake; each proof covers all of it. */
export interface Transcript {
  clusterName: string;
  clientNonce: Uint8Array;
  serverNonce: Uint8Array;
  clientMemberId: string;
  clientAddress: string;
  serverMemberId: string;
  serverAddress: string;
}

/** A fresh nonce for one handshake. */
export function newNonce(): Buffer {
  return randomBytes(NONCE_BYTES);
}

/**
 * HMAC-SHA256 of the transcript under the shared secret, for one role. Each field is length
 * prefixed (no two transcripts encode alike), and the role is part of the input, so the server
 * cannot be made to answer with the client's proof (reflection). Empty without a secret.
 */
export function proofOf(
  secret: string | undefined,
  role: 'client' | 'server',
  t: Transcript,
): Buffer {
  if (secret === undefined) return Buffer.alloc(0);
  const mac = createHmac('sha256', secret);
  mac.update(`granary-handshake/${PROTOCOL_VERSION}/${role}`);
  for (const part of [
    t.clusterName,
    t.clientNonce,
    t.serverNonce,
    t.clientMemberId,
    t.clientAddress,
    t.serverMemberId,
    t.serverAddress,
  ]) {
    const bytes = typeof part === 'string' ? Buffer.from(part, 'utf8') : part;
    const length = Buffer.allocUnsafe(4);
    length.writeUInt32BE(bytes.byteLength);
    mac.update(length);
    mac.update(bytes);
  }
  return mac.digest();
}

/** True when `given` is the proof `secret` makes for this role and transcript (constant time). */
export function verifyProof(
  secret: string | undefined,
  role: 'client' | 'server',
  t: Transcript,
  given: Uint8Array,
): boolean {
  if (secret === undefined) return true;
  const expected = proofOf(secret, role, t);
  return given.byteLength === expected.byteLength && timingSafeEqual(given, expected);
}

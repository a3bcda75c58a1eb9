import { InvalidArgumentError } from '@granary/core';

/** Longest grain identity, in UTF-8 bytes: it travels in every call's target id. */
export const MAX_IDENTITY_BYTES = 1024;

/**
 * A grain identity is a non-empty string of at most MAX_IDENTITY_BYTES.
 * @throws InvalidArgumentError naming `identity`.
 */
export function checkIdentity(identity: unknown): void {
  if (typeof identity !== 'string' || identity.length === 0) {
    throw new InvalidArgumentError('identity', 'must be a non-empty string');
  }
  // At most 3 bytes per UTF-16 unit: short ids need no count.
  if (
    identity.length * 3 > MAX_IDENTITY_BYTES &&
    Buffer.byteLength(identity) > MAX_IDENTITY_BYTES
  ) {
    throw new InvalidArgumentError('identity', `is over ${MAX_IDENTITY_BYTES} bytes`);
  }
}

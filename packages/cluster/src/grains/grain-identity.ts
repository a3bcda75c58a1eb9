import { InvalidArgumentError } from '@granary/core';

/** Longest grain identity, in UTF-8 bytes: it travels in every call's target id. */
export const MAX_IDENTITY_BYTES = 1024;

/** `String.prototype.isWellFormed` (Node 20+; ES2024, past the lib this project compiles with). */
const isWellFormed = (String.prototype as { isWellFormed?: (this: string) => boolean })
  .isWellFormed!;

/**
 * A grain identity is a non-empty, well-formed Unicode string of at most MAX_IDENTITY_BYTES.
 * A lone surrogate is refused: it travels (and is stored) as U+FFFD, so '\ud800' called on its
 * owner and '\ud800' called from another member would be two activations of one stored grain.
 * Every way a call enters (Cluster, GranaryClient, a grain's context, reminders) checks it.
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
  if (!isWellFormed.call(identity)) {
    throw new InvalidArgumentError(
      'identity',
      'holds a lone UTF-16 surrogate (not valid Unicode: it would travel as U+FFFD)',
    );
  }
}

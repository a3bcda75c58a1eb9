import { InvalidArgumentError } from '@granary/core';

/** Longest grain identity, in UTF-8 bytes: it travels in every call's target id. */
export const MAX_IDENTITY_BYTES = 1024;

/** `String.prototype.isWellFormed` (Node 20+; ES2024, past the lib this project compiles with). */
const isWellFormed = (String.prototype as { isWellFormed?: (this: string) => boolean })
  .isWellFormed!;

/**
 * Why `identity` is no grain identity, or undefined when it is one: a non-empty, well-formed
 * Unicode string of at most MAX_IDENTITY_BYTES. A lone surrogate is refused: it travels (and is
 * stored) as U+FFFD, so '\ud800' called on its owner and '\ud800' called from another member
 * would be two activations of one stored grain.
 */
export function identityProblem(identity: unknown): string | undefined {
  if (typeof identity !== 'string' || identity.length === 0) return 'must be a non-empty string';
  // At most 3 bytes per UTF-16 unit: short ids need no count.
  if (
    identity.length * 3 > MAX_IDENTITY_BYTES &&
    Buffer.byteLength(identity) > MAX_IDENTITY_BYTES
  ) {
    return `is over ${MAX_IDENTITY_BYTES} bytes`;
  }
  if (!isWellFormed.call(identity)) {
    return 'holds a lone UTF-16 surrogate (not valid Unicode: it would travel as U+FFFD)';
  }
  return undefined;
}

/**
 * Checks a grain identity where a call enters (Cluster, GranaryClient, a grain's context,
 * reminders); the owner checks it again before it activates one (a peer writes its own PIDs).
 * @throws InvalidArgumentError naming `identity`.
 */
export function checkIdentity(identity: unknown): void {
  const problem = identityProblem(identity);
  if (problem !== undefined) throw new InvalidArgumentError('identity', problem);
}

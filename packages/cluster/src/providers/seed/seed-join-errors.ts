import { registerErrorClasses } from '@granary/core';
import { ClusterError } from '../../errors';

/**
 * The seed answered that this member's id is held by a live member at another address. Internal:
 * join() retries until joinTimeoutMs, then fails with JoinTimeoutError carrying this message.
 */
export class MemberIdHeldError extends ClusterError {
  static override readonly code = 'ERR_MEMBER_ID_HELD';
  override readonly name = 'MemberIdHeldError';
}

registerErrorClasses(MemberIdHeldError);

/**
 * A refused remote handshake that retrying cannot help (cluster name, secret, certificate);
 * a `duplicate` refusal (our previous link still looks alive at the seed) may pass later.
 */
export function isHandshakeRefusal(err: unknown): boolean {
  const e = err as { cause?: unknown } | undefined;
  for (const x of [e, e?.cause] as Array<{ name?: string; retryable?: boolean } | undefined>) {
    if (x?.name === 'HandshakeError' && x.retryable !== true) return true;
  }
  return false;
}

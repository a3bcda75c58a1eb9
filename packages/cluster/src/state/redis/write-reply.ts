import { InconsistentStateError } from '../errors';
import type { StateWriteOptions } from '../state-store';
import type { LossGuard } from './loss-guard';
import { REPLY_EPOCH_CONFLICT, REPLY_LOST, REPLY_MARKED, REPLY_OK } from './scripts';

/** A write or clear script's reply: `[code, value, seen]` (see scripts.ts). */
export type WriteReply = readonly (number | string | undefined)[];

/**
 * What a write or clear script answered: the new version, or the typed error its code means
 * (InconsistentStateError for a version or epoch conflict; StateLostError, through the loss
 * guard, when the server went back in time or the grain is marked lost).
 */
export function writeOutcome(
  guard: LossGuard,
  kind: string,
  id: string,
  key: string,
  operation: 'write' | 'clear',
  options: StateWriteOptions,
  reply: WriteReply,
): number {
  const [code, value, seen] = reply;
  if (code === REPLY_OK) return Number(value);
  if (code === REPLY_EPOCH_CONFLICT) {
    throw new InconsistentStateError(kind, id, 'epoch', options.epoch, Number(value), operation);
  }
  if (code === REPLY_LOST || code === REPLY_MARKED) {
    const evidence = code === REPLY_LOST ? 'version' : 'marked';
    throw guard.lostReply(kind, id, key, Number(value), Number(seen), evidence);
  }
  const actual = Number(value) < 0 ? null : Number(value);
  throw new InconsistentStateError(kind, id, 'version', options.expectedVersion, actual, operation);
}

/** The scripts' expected-version argument: '' for none (-1). */
export function expectedArg(expected: number): string {
  return expected < 0 ? '' : String(expected);
}

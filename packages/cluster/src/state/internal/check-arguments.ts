import { InvalidArgumentError } from '@granary/core';
import type { StateWriteOptions } from '../state-store';

/** Rejects what no store could store faithfully: empty names, non-integer versions or epochs. */
export function checkWriteArguments(
  kind: string,
  id: string,
  options: StateWriteOptions,
  state?: Uint8Array,
): void {
  checkKey(kind, id);
  const { expectedVersion, epoch } = options ?? ({} as StateWriteOptions);
  if (expectedVersion !== null && !isNonNegativeInteger(expectedVersion)) {
    throw new InvalidArgumentError(
      'options.expectedVersion',
      `state of ${kind}/${id}: expectedVersion must be null or a non-negative integer, got ${String(expectedVersion)}`,
    );
  }
  if (!isNonNegativeInteger(epoch)) {
    throw new InvalidArgumentError(
      'options.epoch',
      `state of ${kind}/${id}: epoch must be a non-negative integer, got ${String(epoch)}`,
    );
  }
  if (state !== undefined && !(state instanceof Uint8Array)) {
    throw new InvalidArgumentError(
      'state',
      `state of ${kind}/${id}: state must be a Uint8Array (encode it with the kind's StateCodec)`,
    );
  }
}

/** Kind and id must be non-empty strings. */
export function checkKey(kind: string, id: string): void {
  if (typeof kind !== 'string' || kind.length === 0) {
    throw new InvalidArgumentError(
      'kind',
      `state kind must be a non-empty string, got ${String(kind)}`,
    );
  }
  if (typeof id !== 'string' || id.length === 0) {
    throw new InvalidArgumentError(
      'id',
      `state id of kind ${kind} must be a non-empty string, got ${String(id)}`,
    );
  }
}

function isNonNegativeInteger(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

import { StateCorruptError } from '../errors';

/** The fields of a grain's hash that hold integers (scripts.ts): version, lost mark, epoch. */
const FIELD_NAMES = { v: 'version', l: 'lost mark', e: 'epoch' } as const;

/** A decimal integer as the scripts store it (Redis formats the numbers it is given so). */
const INTEGER = /^(?:0|[1-9][0-9]{0,15})$/;

/**
 * The integer in field `field` of a grain's hash as read (null: absent). Anything else under the
 * store's key, written by another program or damaged, is a StateCorruptError for that grain: read
 * with Number(), 'abc' became version NaN (served, then every write of the grain failed as a bad
 * argument of the caller), '' version 0 and a lost mark 'x' a StateLostError naming version NaN;
 * an epoch that is no number made the write scripts skip the fencing check for that grain
 * (Lua's tonumber gives nil), so a stale owner's write would have been accepted.
 */
export function storedInteger(
  kind: string,
  id: string,
  key: string,
  field: keyof typeof FIELD_NAMES,
  raw: Buffer | null,
): number | null {
  if (raw === null) return null;
  const text = raw.toString('latin1');
  const n = Number(text);
  if (INTEGER.test(text) && Number.isSafeInteger(n) && (field !== 'v' || n > 0)) return n;
  const shown = JSON.stringify(text.slice(0, 32)) + (text.length > 32 ? '...' : '');
  throw new StateCorruptError(
    kind,
    id,
    key,
    `field ${field} (${FIELD_NAMES[field]}) holds ${shown}, not ${field === 'v' ? 'a positive' : 'an'} integer`,
  );
}

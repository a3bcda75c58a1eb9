import { shortStringProblem } from '../../membership/member-record';
import { MAX_SHARD_COUNT } from '../../placement/kind-ranges';

/** One released claim in a hand-off note: [kind, range, epoch]. */
export type ReleasedItem = [string, number, number];

/**
 * What one member writes to another under `<root>notes/<to>/<from>`: the claims it just released
 * that the receiver is the desired owner of (a hand-off: the receiver claims them at once instead
 * of waiting for its retry tick), or a request to audit its claims (let go of one it should not
 * hold). Notes replace a watch on every claim key: a release reaches the one member that waits
 * for it, not all of them.
 */
export interface Note {
  released?: ReleasedItem[];
  letGo?: boolean;
}

/** Encodes a note's value. */
export function encodeNote(note: Note): Buffer {
  return Buffer.from(JSON.stringify(note));
}

/**
 * Decodes a note's value: the items that are well formed (a kind name, a range in
 * [0, MAX_SHARD_COUNT), an epoch that is a positive etcd revision), and why the rest were left
 * out. An unreadable value is an empty note. Anyone who can write under the prefix can write a
 * note, so nothing in it is taken on trust.
 */
export function decodeNote(value: Buffer): { note: Note; problem?: string | undefined } {
  let v: Partial<Record<keyof Note, unknown>>;
  try {
    v = JSON.parse(value.toString()) as typeof v;
  } catch {
    return { note: {}, problem: 'the value is not JSON' };
  }
  if (typeof v !== 'object' || v === null) return { note: {}, problem: 'not a JSON object' };
  const letGo = v.letGo === true;
  if (v.released === undefined) return { note: { letGo } };
  if (!Array.isArray(v.released)) {
    return { note: { letGo }, problem: 'released must be a list of [kind, range, epoch]' };
  }
  const released = v.released.filter(isReleasedItem);
  const bad = v.released.length - released.length;
  return {
    note: { released, letGo },
    problem: bad > 0 ? `${bad} released item(s) not [kind, range, epoch] in range` : undefined,
  };
}

function isReleasedItem(i: unknown): i is ReleasedItem {
  if (!Array.isArray(i) || i.length !== 3) return false;
  const [kind, range, epoch] = i as unknown[];
  return (
    shortStringProblem(kind, 'kind') === undefined &&
    Number.isInteger(range) &&
    (range as number) >= 0 &&
    (range as number) < MAX_SHARD_COUNT &&
    Number.isSafeInteger(epoch) &&
    (epoch as number) > 0
  );
}

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

/** Decodes a note's value; an unreadable value is an empty note. */
export function decodeNote(value: Buffer): Note {
  try {
    const v = JSON.parse(value.toString()) as Note;
    const released = Array.isArray(v.released)
      ? v.released.filter(
          (i): i is ReleasedItem =>
            Array.isArray(i) && typeof i[0] === 'string' && Number.isInteger(i[1]),
        )
      : undefined;
    return released ? { released, letGo: v.letGo === true } : { letGo: v.letGo === true };
  } catch {
    return {};
  }
}

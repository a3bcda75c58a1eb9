/**
 * The Redis keys of one store: a grain's hash `<prefix>{<kind>/<id>}` (a hash tag, so on Redis
 * Cluster everything of one grain is in one slot; the kind escaped, so kind 'a/b' + id 'c'
 * differs from 'a' + 'b/c'), the identity marker `<prefix>store`, the set of grains marked
 * lost `<prefix>lost` and the read fence `<prefix>fence` (none contains `{`, so no grain key can
 * collide with them).
 */
export class StateKeys {
  private readonly kindKeys = new Map<string, string>();
  /** The store identity marker (store-identity.ts). */
  readonly identity: string;
  /** The grain keys marked lost, for stateLoss() (advisory: the marks are authoritative). */
  readonly lostIndex: string;
  /**
   * A counter INCRed before the WAIT that covers reads (`'replicated'`, `'fsync'` with WAITAOF):
   * a write on the reading connection, so the WAIT covers what the reads found (durable-ack.ts).
   */
  readonly fence: string;

  constructor(private readonly prefix: string) {
    this.identity = `${prefix}store`;
    this.lostIndex = `${prefix}lost`;
    this.fence = `${prefix}fence`;
  }

  /** The key of one grain's hash. */
  keyOf(kind: string, id: string): string {
    let kindKey = this.kindKeys.get(kind);
    if (kindKey === undefined) {
      kindKey = `${this.prefix}{${encodeURIComponent(kind)}/`;
      this.kindKeys.set(kind, kindKey);
    }
    return `${kindKey}${id}}`;
  }

  /** kind and id of a grain key, or undefined for a key that is not one. */
  parseKey(key: string): { kind: string; id: string } | undefined {
    const open = `${this.prefix}{`;
    if (!key.startsWith(open) || !key.endsWith('}')) return undefined;
    const body = key.slice(open.length, -1);
    const slash = body.indexOf('/');
    if (slash < 0) return undefined;
    return { kind: decodeURIComponent(body.slice(0, slash)), id: body.slice(slash + 1) };
  }
}

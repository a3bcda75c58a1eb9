import { fnv1a32 } from '../../placement/shard-of';
import type { Activation } from '../activation';

/** Slots of a shard's first table (a power of two). */
const MIN_TABLE = 8;
/** Rehashed bigger once live + removed entries fill this share of the table (linear probing). */
const MAX_LOAD = 0.75;
/** Rehashed smaller once live entries fill less than this share (memory follows passivation). */
const MIN_LOAD = 0.125;

/** A removed entry: probing continues past it; reused by the next insert. */
const REMOVED = Symbol('removed');
type Slot = Activation | typeof REMOVED | undefined;

/** The widest table mask: keys fit a small integer (no boxed number on the activation). */
const KEY_MASK = 0x3fffffff;

/**
 * An identity's table key: its FNV hash mixed again (the shard is the hash's low bits), cut to
 * 30 bits; its slot in a table is `key & mask`. Kept on the activation (`tableKey`), so a
 * rehash or a removal does not hash every identity string again.
 */
function keyOf(hash: number): number {
  let x = Math.imul(hash ^ (hash >>> 16), 0x45d9f3b);
  x ^= x >>> 16;
  return x & KEY_MASK;
}

/**
 * The live activations of one hosted kind on this member, by shard then identity.
 *
 * Each shard's activations sit in an open-addressing table (linear probing over a power-of-two
 * array) keyed by the identity's FNV-1a hash, which the router computes anyway to find the
 * shard: one pointer slot per activation at 38-75% load (about 11-21 B), where a Map entry
 * costs 28-56 B and hashes every new identity string in the runtime.
 */
export class ActivationTable {
  /** Per shard: its table, or undefined while it has no activation (dropped when it empties). */
  private readonly tables: Array<Slot[] | undefined>;
  /** Per shard: live entries and removed markers in its table. */
  private readonly live: Int32Array;
  private readonly removed: Int32Array;
  /** Live activations of the kind. */
  count = 0;

  constructor(readonly shardCount: number) {
    this.tables = new Array<Slot[] | undefined>(shardCount).fill(undefined);
    this.live = new Int32Array(shardCount);
    this.removed = new Int32Array(shardCount);
  }

  /**
   * The live activation whose identity is `key` from index `from` on (`key` is the identity
   * itself, or a grain id `$g/<kind>/<identity>` read in place: no string is cut per call);
   * `hash` is the identity's fnv1a32.
   */
  get(shard: number, hash: number, key: string, from: number): Activation | undefined {
    const t = this.tables[shard];
    if (t === undefined) return undefined;
    const length = key.length - from;
    const mask = t.length - 1;
    for (let i = keyOf(hash) & mask; ; i = (i + 1) & mask) {
      const e = t[i];
      if (e === undefined) return undefined;
      if (e !== REMOVED && e.identity.length === length && key.startsWith(e.identity, from)) {
        return e;
      }
    }
  }

  /** Adds an activation (none of its identity is in the table). */
  add(a: Activation, hash: number = fnv1a32(a.identity)): void {
    const s = a.shard;
    let t = this.tables[s];
    if (t === undefined) this.tables[s] = t = new Array<Slot>(MIN_TABLE).fill(undefined);
    else if (this.live[s]! + this.removed[s]! + 1 > t.length * MAX_LOAD) {
      t = this.rehash(s, (this.live[s]! + 1) * 2);
    }
    const mask = t.length - 1;
    const key = keyOf(hash);
    a.tableKey = key;
    let i = key & mask;
    while (t[i] !== undefined && t[i] !== REMOVED) i = (i + 1) & mask;
    if (t[i] === REMOVED) this.removed[s]!--;
    t[i] = a;
    this.live[s]!++;
    this.count++;
  }

  /** Removes `a` if it is in the table. */
  remove(a: Activation): void {
    const s = a.shard;
    const t = this.tables[s];
    if (t === undefined) return;
    const mask = t.length - 1;
    for (let i = a.tableKey & mask; ; i = (i + 1) & mask) {
      const e = t[i];
      if (e === undefined) return;
      if (e !== a) continue;
      t[i] = REMOVED;
      this.removed[s]!++;
      this.count--;
      const left = --this.live[s]!;
      if (left === 0) {
        this.tables[s] = undefined;
        this.removed[s] = 0;
      } else if (t.length > MIN_TABLE && left < t.length * MIN_LOAD) this.rehash(s, left * 2);
      return;
    }
  }

  /** The activations of one shard (a copy). */
  inShard(shard: number): Activation[] {
    const t = this.tables[shard];
    const out: Activation[] = [];
    if (t === undefined) return out;
    for (const e of t) if (e !== undefined && e !== REMOVED) out.push(e);
    return out;
  }

  /** Moves a shard's live entries into a table of at least `want` slots (no removed markers). */
  private rehash(shard: number, want: number): Slot[] {
    let size = MIN_TABLE;
    while (size < want) size *= 2;
    const t = new Array<Slot>(size).fill(undefined);
    const mask = size - 1;
    for (const e of this.tables[shard]!) {
      if (e === undefined || e === REMOVED) continue;
      let i = e.tableKey & mask;
      while (t[i] !== undefined) i = (i + 1) & mask;
      t[i] = e;
    }
    this.tables[shard] = t;
    this.removed[shard] = 0;
    return t;
  }
}

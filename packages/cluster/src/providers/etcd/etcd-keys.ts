import type { IKeyValue } from 'etcd3';
import type { Member, MemberStatus } from '../../membership/topology';
import type { KindShards } from '../../placement/kind-ranges';

/** What a member key stores; the incarnation is the key's create revision, not stored. */
interface MemberValue {
  id: string;
  address: string;
  kinds: string[];
  status: MemberStatus;
  /** Per kind: [shardCount, ranges]. */
  shards?: Record<string, [number, number]>;
}

/** What a claim key stores (for people reading etcd; the provider only needs the holder id). */
interface ClaimValue {
  member: string;
  incarnation: number;
}

/** A key under the cluster root, parsed. */
export type ParsedKey =
  | { type: 'member'; id: string }
  | { type: 'shard'; kind: string; shard: number }
  | { type: 'note'; to: string; from: string }
  | undefined;

/**
 * The key layout of one cluster: `<prefix>/<cluster>/members/<id>` (on the member's lease),
 * `<prefix>/<cluster>/shards/<kind>/<n>` (claims, on the holder's lease) and
 * `<prefix>/<cluster>/notes/<to>/<from>` (hand-offs and let-go requests from one member to
 * another, on the sender's lease, deleted by the receiver once read) and
 * `<prefix>/<cluster>/kinds/<kind>` (how the kind's shards are cut into claim ranges).
 */
export class EtcdKeys {
  /** `<prefix>/<cluster>/`: the one watched range. */
  readonly root: string;
  /** `<root>members/`. */
  readonly members: string;
  /** `<root>shards/`. */
  readonly shards: string;
  /** `<root>notes/`. */
  readonly notes: string;
  /** `<root>kinds/`. */
  readonly kinds: string;

  constructor(prefix: string, cluster: string) {
    this.root = `${prefix}/${cluster}/`;
    this.members = `${this.root}members/`;
    this.shards = `${this.root}shards/`;
    this.notes = `${this.root}notes/`;
    this.kinds = `${this.root}kinds/`;
  }

  /** Key of a kind's spec (how its shards are cut into claim ranges). */
  kindSpec(kind: string): Buffer {
    return Buffer.from(`${this.kinds}${kind}`);
  }

  /** Key of a member. */
  member(id: string): Buffer {
    return Buffer.from(this.members + id);
  }

  /** Key of a shard claim. */
  shard(kind: string, shard: number): Buffer {
    return Buffer.from(`${this.shards}${kind}/${shard}`);
  }

  /** Key of a note from one member to another (ids URI-encoded: an id may hold a '/'). */
  note(to: string, from: string): Buffer {
    return Buffer.from(`${this.notesTo(to)}${encodeURIComponent(from)}`);
  }

  /** Prefix of the notes to one member. */
  notesTo(to: string): string {
    return `${this.notes}${encodeURIComponent(to)}/`;
  }

  /** Parses a key under the root. */
  parse(key: Buffer): ParsedKey {
    const text = key.toString();
    if (text.startsWith(this.notes)) {
      const rest = text.slice(this.notes.length);
      const slash = rest.indexOf('/');
      if (slash <= 0) return undefined;
      try {
        const to = decodeURIComponent(rest.slice(0, slash));
        return { type: 'note', to, from: decodeURIComponent(rest.slice(slash + 1)) };
      } catch {
        return undefined; // not one of ours
      }
    }
    if (text.startsWith(this.members))
      return { type: 'member', id: text.slice(this.members.length) };
    if (text.startsWith(this.shards)) {
      const rest = text.slice(this.shards.length);
      const slash = rest.lastIndexOf('/');
      const shard = Number(rest.slice(slash + 1));
      if (slash > 0 && Number.isInteger(shard))
        return { type: 'shard', kind: rest.slice(0, slash), shard };
    }
    return undefined;
  }
}

/** The end of the range of every key starting with `prefix` (prefix with its last byte + 1). */
export function prefixEnd(prefix: string): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) {
      end[i]++;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}

/** Encodes a member key's value. */
export function encodeMember(
  m: Omit<MemberValue, 'shards'> & { kindShards?: Record<string, KindShards> | undefined },
): Buffer {
  const shards = m.kindShards
    ? Object.fromEntries(
        Object.entries(m.kindShards).map(([k, v]) => [k, [v.shardCount, v.ranges]]),
      )
    : undefined;
  return Buffer.from(
    JSON.stringify({ id: m.id, address: m.address, kinds: m.kinds, status: m.status, shards }),
  );
}

/** Decodes a member key; undefined if the value is not one of ours. */
export function decodeMember(kv: IKeyValue): Member | undefined {
  try {
    const v = JSON.parse(kv.value.toString()) as Partial<MemberValue>;
    if (typeof v.id !== 'string' || typeof v.address !== 'string' || !Array.isArray(v.kinds))
      return undefined;
    const status: MemberStatus = v.status === 'leaving' || v.status === 'joining' ? v.status : 'up';
    const member: Member = {
      id: v.id,
      address: v.address,
      kinds: v.kinds.map(String),
      status,
      incarnation: Number(kv.create_revision),
    };
    if (v.shards && typeof v.shards === 'object') {
      const kindShards: Record<string, KindShards> = {};
      for (const [k, pair] of Object.entries(v.shards)) {
        if (Array.isArray(pair) && pair.length === 2)
          kindShards[k] = { shardCount: Number(pair[0]), ranges: Number(pair[1]) };
      }
      member.kindShards = kindShards;
    }
    return member;
  } catch {
    return undefined;
  }
}

/** Encodes a claim key's value. */
export function encodeClaim(c: ClaimValue): Buffer {
  return Buffer.from(JSON.stringify(c));
}

/** The holder id of a claim key ('?' if the value is not one of ours). */
export function claimHolder(kv: IKeyValue): string {
  try {
    const v = JSON.parse(kv.value.toString()) as Partial<ClaimValue>;
    return typeof v.member === 'string' ? v.member : '?';
  } catch {
    return '?';
  }
}

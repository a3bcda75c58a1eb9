import type { IKeyValue } from 'etcd3';
import type { Member, MemberStatus } from '../../membership/topology';
import type { KindShards } from '../../placement/kind-ranges';
import { memberProblem, statedAddressProblem } from '../../membership/member-record';

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

/** A member key's value, decoded and checked: the member, or why it is not one. */
export type DecodedMember =
  { member: Member; problem?: undefined } | { member?: undefined; problem: string };

/**
 * Decodes a member key's value and checks it as any record from outside (memberProblem): anyone
 * who can write under the prefix can write there, and a record that made placement throw, or
 * named another member's id (it replaced that member, address and all, in every topology), or
 * asked for 2^30 shards, must stay out. `keyId` is the id in the key: the value must name it.
 * A member writes its key on its lease, so that the key goes when the member does: a key on no
 * lease was written by no live member, and stays out too (a well-formed one written by hand was
 * a member for ever, counted by placement among the hosts of its kinds).
 */
export function decodeMember(kv: IKeyValue, keyId: string): DecodedMember {
  let v: Partial<Record<keyof MemberValue, unknown>>;
  try {
    v = JSON.parse(kv.value.toString()) as typeof v;
  } catch {
    return { problem: 'the value is not JSON' };
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    return { problem: 'the value is not a JSON object' };
  if (v.id !== keyId) {
    return {
      problem: `its id ${JSON.stringify(v.id)?.slice(0, 64)} is not the key's (${keyId.slice(0, 64)})`,
    };
  }
  // Written by every version of the provider; a record without one is taken as up.
  const status = v.status ?? 'up';
  let kindShards: Record<string, KindShards> | undefined;
  if (v.shards !== undefined && v.shards !== null) {
    if (typeof v.shards !== 'object' || Array.isArray(v.shards))
      return { problem: 'shards must be an object of [shardCount, ranges] pairs' };
    kindShards = {};
    for (const [k, pair] of Object.entries(v.shards)) {
      if (!Array.isArray(pair) || pair.length !== 2)
        return {
          problem: `shards of ${JSON.stringify(k).slice(0, 64)} must be [shardCount, ranges]`,
        };
      kindShards[k] = { shardCount: pair[0] as number, ranges: pair[1] as number };
    }
  }
  const member: Member = {
    id: keyId,
    address: v.address as string,
    kinds: v.kinds as string[],
    status: status as MemberStatus,
    incarnation: Number(kv.create_revision),
  };
  if (kindShards) member.kindShards = kindShards;
  // Any address a member may state ('nonhost' without a remote; the `address` option).
  const problem = memberProblem(member, statedAddressProblem);
  if (problem !== undefined) return { problem };
  if (kv.lease === undefined || String(kv.lease) === '0')
    return { problem: 'it is on no lease (a member writes its key on its lease)' };
  return { member };
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

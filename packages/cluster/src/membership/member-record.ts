import { MAX_SHARD_COUNT } from '../placement/kind-ranges';
import type { Member } from './topology';

/** Longest id, address or kind name a member record may hold. */
export const MAX_MEMBER_FIELD_BYTES = 256;
/** Most kinds one member may host. */
export const MAX_MEMBER_KINDS = 1024;
/**
 * Most distinct kinds a topology from outside (a gateway's answer) may name, and most kinds a
 * caller remembers having seen hosted: 16 members' worth of MAX_MEMBER_KINDS, all different.
 */
export const MAX_TOPOLOGY_KINDS = 16 * MAX_MEMBER_KINDS;

const STATUSES = new Set(['joining', 'up', 'leaving']);

/** Why `value` is not a short non-empty string (undefined when it is). */
export function shortStringProblem(value: unknown, what: string): string | undefined {
  if (typeof value !== 'string' || value.length === 0) return `${what} must be a non-empty string`;
  if (Buffer.byteLength(value) > MAX_MEMBER_FIELD_BYTES)
    return `${what} is over ${MAX_MEMBER_FIELD_BYTES} bytes`;
  return undefined;
}

/** Why `value` is not `host:port` (undefined when it is). */
export function addressProblem(value: unknown, what = 'address'): string | undefined {
  const p = shortStringProblem(value, what);
  if (p !== undefined) return p;
  const m = /^(?:\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(value as string);
  if (!m || Number(m[1]) < 1 || Number(m[1]) > 65535) return `${what} is not host:port`;
  return undefined;
}

/** Why `value` is not a list of kind names (undefined when it is). */
export function kindsProblem(value: unknown): string | undefined {
  if (!Array.isArray(value)) return 'kinds must be an array of kind names';
  if (value.length > MAX_MEMBER_KINDS) return `kinds has over ${MAX_MEMBER_KINDS} entries`;
  for (const k of value) {
    const p = shortStringProblem(k, 'a kind name');
    if (p !== undefined) return p;
  }
  return undefined;
}

/**
 * Why `value` is not a member's kindShards (optional: undefined is fine): per kind name, a
 * shardCount in [1, MAX_SHARD_COUNT] and ranges in [1, shardCount]. Placement divides by these.
 */
export function kindShardsProblem(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'kindShards must be an object';
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_MEMBER_KINDS) return `kindShards has over ${MAX_MEMBER_KINDS} entries`;
  for (const [kind, v] of entries) {
    const k = v as { shardCount?: unknown; ranges?: unknown } | null;
    const count = k?.shardCount;
    const ranges = k?.ranges;
    if (
      shortStringProblem(kind, 'a kind name') !== undefined ||
      !Number.isInteger(count) ||
      (count as number) < 1 ||
      (count as number) > MAX_SHARD_COUNT ||
      !Number.isInteger(ranges) ||
      (ranges as number) < 1 ||
      (ranges as number) > (count as number)
    ) {
      return `kindShards of ${JSON.stringify(kind).slice(0, 64)} must be {shardCount, ranges <= shardCount}`;
    }
  }
  return undefined;
}

/** Why `value` is not a member status (undefined when it is). */
export function statusProblem(value: unknown): string | undefined {
  return typeof value === 'string' && STATUSES.has(value)
    ? undefined
    : 'status must be joining, up or leaving';
}

/**
 * Why a record that came from outside (a peer, a store) is not a well-formed Member; undefined
 * when it is. Checked before a record touches a table or a ring: a malformed member must never
 * make placement throw.
 */
export function memberProblem(
  value: unknown,
  /**
   * How the address is checked: host:port where the record is dialled as it is (the seed's);
   * a short string where a member may state any address, 'nonhost' without a remote (etcd).
   */
  checkAddress: (address: unknown) => string | undefined = addressProblem,
): string | undefined {
  if (typeof value !== 'object' || value === null) return 'a member must be an object';
  const m = value as Partial<Member>;
  return (
    shortStringProblem(m.id, 'id') ??
    checkAddress(m.address) ??
    kindsProblem(m.kinds) ??
    kindShardsProblem(m.kindShards) ??
    statusProblem(m.status) ??
    (Number.isSafeInteger(m.incarnation) && m.incarnation! >= 0
      ? undefined
      : 'incarnation must be a non-negative integer')
  );
}

/** Why `value` is not a short non-empty address (undefined when it is); see memberProblem. */
export function statedAddressProblem(value: unknown): string | undefined {
  return shortStringProblem(value, 'address');
}

import {
  EtcdAuthenticationFailedError,
  EtcdPermissionDeniedError,
  EtcdRoleNotGrantedError,
  EtcdUserNotFoundError,
  type Etcd3,
  type ICompare,
  type IRequestOp,
} from 'etcd3';
import { ClusterError, JoinRefusedError } from '../../errors';
import { shardConflict } from '../../internal/shard-conflict';
import type { Member } from '../../membership/topology';
import type { KindShards } from '../../placement/kind-ranges';
import type { JoinRequest } from '../cluster-provider';
import { decodeMember, prefixEnd, type EtcdKeys } from './etcd-keys';

/**
 * JoinRefusedError for an etcd error that says the member's etcd credentials are wrong (unknown
 * user, wrong password) or lack a permission on the prefix; undefined for any other. Those do
 * not mend within a join's retries: a join retried them for joinTimeoutMs, logging each attempt.
 */
export function credentialsRefusal(err: unknown, endpoints: string): JoinRefusedError | undefined {
  const refused =
    err instanceof EtcdAuthenticationFailedError ||
    err instanceof EtcdUserNotFoundError ||
    err instanceof EtcdPermissionDeniedError ||
    err instanceof EtcdRoleNotGrantedError;
  if (!refused) return undefined;
  return new JoinRefusedError(
    `etcd at ${endpoints} refused this member's credentials or their permissions ` +
      `(EtcdProviderOptions.etcd.auth; the user's role needs readwrite on the prefix): ` +
      (err as Error).message,
    { cause: err },
  );
}

/**
 * A registration attempt lost a race (a key changed between read and write): try again. Internal
 * (the registration loop retries it); never reaches a caller.
 */
export class RegistrationConflictError extends ClusterError {
  static override readonly code = 'ERR_REGISTRATION_CONFLICT';
  override readonly name = 'RegistrationConflictError';
}

/**
 * The member key of this id is still on another lease: the previous process with this id (killed
 * and restarted faster than its lease's TTL) or a second live process with it. Internal: the
 * registration waits for the lease to expire.
 */
export class MemberKeyHeldError extends ClusterError {
  static override readonly code = 'ERR_MEMBER_KEY_HELD';
  override readonly name = 'MemberKeyHeldError';
}

/** Encodes a kind spec key's value: `[shardCount, ranges]`. */
function encodeSpec(k: KindShards): Buffer {
  return Buffer.from(JSON.stringify([k.shardCount, k.ranges]));
}

function decodeSpec(value: Buffer): KindShards | undefined {
  try {
    const v = JSON.parse(value.toString()) as unknown;
    if (Array.isArray(v) && v.length === 2)
      return { shardCount: Number(v[0]), ranges: Number(v[1]) };
  } catch {
    // not one of ours: treated as a different spec
  }
  return undefined;
}

/**
 * Creates the member key on `lease`, only if absent, and only if every kind it hosts is cut into
 * shards the way the cluster's other hosts of that kind cut it (24.5). Each kind has a spec key
 * `<root>kinds/<kind>` = [shardCount, ranges] (no lease: it outlives its hosts). The member key
 * is written in one transaction with a comparison per kind: the spec equals this member's, or,
 * where it is absent or stale and no live member hosts the kind, the spec is (re)written, with
 * the guard that no member key changed since the read (so no host with the old spec registered
 * meanwhile). A live host of a kind with another spec refuses the join with JoinRefusedError
 * naming both values. Returns the member key's create revision (the incarnation); a member key
 * already on `lease` (an earlier attempt applied, its answer lost) counts as registered.
 */
export async function registerMember(
  client: Etcd3,
  keys: EtcdKeys,
  self: JoinRequest,
  memberValue: Buffer,
  lease: string,
  timeoutMs: number,
): Promise<number> {
  const key = keys.member(self.id);
  const specs = Object.entries(self.kindShards ?? {});
  const read = await client.kv.txn(
    {
      compare: [],
      success: [
        { request_range: { key: Buffer.from(keys.members), range_end: prefixEnd(keys.members) } },
        ...specs.map(([kind]) => ({ request_range: { key: keys.kindSpec(kind) } })),
      ],
    },
    { deadline: Date.now() + timeoutMs },
  );
  const readRevision = Number(read.header.revision);
  // Malformed records are left out here as in the topology (the watch logs them).
  const members: Member[] = [];
  for (const kv of read.responses[0]?.response_range?.kvs ?? []) {
    const parsed = keys.parse(kv.key);
    const decoded = parsed?.type === 'member' ? decodeMember(kv, parsed.id) : undefined;
    if (decoded?.member) members.push(decoded.member);
  }
  const compare: ICompare[] = [{ key, target: 'Create', result: 'Equal', create_revision: 0 }];
  const success: IRequestOp[] = [{ request_put: { key, value: memberValue, lease } }];
  let guardMembers = false;
  const conflict = shardConflict(self.id, self.kindShards ?? {}, members);
  if (conflict) throw new JoinRefusedError(conflict);
  specs.forEach(([kind, mine], i) => {
    const specKey = keys.kindSpec(kind);
    const kv = read.responses[i + 1]?.response_range?.kvs[0];
    const stored = kv ? decodeSpec(kv.value) : undefined;
    if (kv && stored?.shardCount === mine.shardCount && stored.ranges === mine.ranges) {
      compare.push({ key: specKey, target: 'Value', result: 'Equal', value: kv.value });
      return;
    }
    // Absent, or left by hosts that are all gone: this member's spec becomes the kind's.
    compare.push(
      kv
        ? { key: specKey, target: 'Mod', result: 'Equal', mod_revision: kv.mod_revision }
        : { key: specKey, target: 'Create', result: 'Equal', create_revision: 0 },
    );
    success.push({ request_put: { key: specKey, value: encodeSpec(mine) } });
    guardMembers = true;
  });
  if (guardMembers) {
    compare.push({
      key: Buffer.from(keys.members),
      range_end: prefixEnd(keys.members),
      target: 'Mod',
      result: 'Less',
      mod_revision: String(readRevision + 1),
    });
  }
  const res = await client.kv.txn(
    { compare, success, failure: [{ request_range: { key } }] },
    { deadline: Date.now() + timeoutMs },
  );
  if (!res.succeeded) {
    const held = res.responses[0]?.response_range?.kvs[0];
    const holder = held?.lease;
    // Ours: an earlier attempt on this lease was applied though its answer was lost.
    if (held && String(holder) === lease) return Number(held.create_revision);
    if (holder !== undefined) {
      throw new MemberKeyHeldError(
        `member key of '${self.id}' is still held by lease ${holder} (another process with this id, or a previous incarnation whose lease has not expired yet)`,
      );
    }
    throw new RegistrationConflictError(
      'a kind spec or a member changed during registration; trying again',
    );
  }
  return Number(res.header.revision);
}

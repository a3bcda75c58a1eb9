import {
  addressProblem,
  kindShardsProblem,
  kindsProblem,
  memberProblem,
  shortStringProblem,
  statusProblem,
} from '../../membership/member-record';
import type { Topology } from '../../membership/topology';
import { SEED_BATCH_MAX } from './seed-protocol';

const SEED_TYPES = new Set([
  'seed.join',
  'seed.heartbeat',
  'seed.status',
  'seed.claims',
  'seed.releases',
  'seed.leave',
]);

/** Largest shard number a claim may name (shard counts are far below it). */
const MAX_SHARD = 2 ** 31 - 1;

/** True for anything that claims to be a seed-protocol request (`t` starts with `seed.`). */
export function looksLikeSeedRequest(m: unknown): boolean {
  return (
    typeof m === 'object' &&
    m !== null &&
    typeof (m as { t?: unknown }).t === 'string' &&
    (m as { t: string }).t.startsWith('seed.')
  );
}

/**
 * Why a message is not a well-formed seed request (undefined when it is): its type, and every
 * field's type, length and range, checked before anything reaches the membership table.
 */
export function seedRequestProblem(value: unknown): string | undefined {
  const m = value as Record<string, unknown>;
  if (!SEED_TYPES.has(m.t as string)) return `unknown seed request '${String(m.t).slice(0, 32)}'`;
  const leaseId = (): string | undefined =>
    Number.isSafeInteger(m.leaseId) && (m.leaseId as number) > 0
      ? undefined
      : 'leaseId must be a positive integer';
  const shard = (v: unknown): string | undefined =>
    Number.isInteger(v) && (v as number) >= 0 && (v as number) <= MAX_SHARD
      ? undefined
      : 'shard must be a non-negative integer';
  /** The items of a batched claim or release: [kind, shard] or [kind, shard, epoch] each. */
  const items = (withEpoch: boolean): string | undefined => {
    if (!Array.isArray(m.items) || m.items.length === 0 || m.items.length > SEED_BATCH_MAX)
      return `items must be an array of 1 to ${SEED_BATCH_MAX} entries`;
    for (const item of m.items as unknown[]) {
      if (!Array.isArray(item) || item.length !== (withEpoch ? 3 : 2))
        return `an item must be [kind, shard${withEpoch ? ', epoch' : ''}]`;
      const p =
        shortStringProblem(item[0], 'kind') ??
        shard(item[1]) ??
        (!withEpoch || (Number.isSafeInteger(item[2]) && (item[2] as number) >= 0)
          ? undefined
          : 'epoch must be a non-negative integer');
      if (p !== undefined) return p;
    }
    return undefined;
  };
  switch (m.t) {
    case 'seed.join': {
      const listener = m.listener as { address?: unknown; id?: unknown } | null | undefined;
      return (
        shortStringProblem(m.cluster, 'cluster') ??
        shortStringProblem(m.id, 'id') ??
        addressProblem(m.address) ??
        kindsProblem(m.kinds) ??
        kindShardsProblem(m.kindShards) ??
        statusProblem(m.status) ??
        (typeof listener === 'object' && listener !== null
          ? (addressProblem(listener.address, 'listener.address') ??
            shortStringProblem(listener.id, 'listener.id'))
          : 'listener must be a PID')
      );
    }
    case 'seed.heartbeat':
      return (
        leaseId() ??
        (Number.isSafeInteger(m.version) && (m.version as number) >= 0
          ? undefined
          : 'version must be a non-negative integer')
      );
    case 'seed.status':
      return leaseId() ?? statusProblem(m.status);
    case 'seed.claims':
      return leaseId() ?? items(false);
    case 'seed.releases':
      return items(true);
    default:
      return leaseId();
  }
}

/** Why a topology a peer sent is malformed (undefined when it is well formed). */
export function topologyProblem(value: unknown): string | undefined {
  const t = value as Partial<Topology> | null;
  if (typeof t !== 'object' || t === null) return 'a topology must be an object';
  if (!Number.isSafeInteger(t.version) || t.version! < 0) return 'version must be an integer';
  if (!Array.isArray(t.members)) return 'members must be an array';
  for (const m of t.members) {
    const p = memberProblem(m);
    if (p !== undefined) return `member ${JSON.stringify((m as { id?: unknown })?.id)}: ${p}`;
  }
  return undefined;
}

import {
  addressProblem,
  kindsProblem,
  memberProblem,
  shortStringProblem,
  statusProblem,
} from '../../membership/member-record';
import type { Topology } from '../../membership/topology';

const SEED_TYPES = new Set([
  'seed.join',
  'seed.heartbeat',
  'seed.status',
  'seed.claim',
  'seed.release',
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
  const shard = (): string | undefined =>
    Number.isInteger(m.shard) && (m.shard as number) >= 0 && (m.shard as number) <= MAX_SHARD
      ? undefined
      : 'shard must be a non-negative integer';
  switch (m.t) {
    case 'seed.join': {
      const listener = m.listener as { address?: unknown; id?: unknown } | null | undefined;
      return (
        shortStringProblem(m.cluster, 'cluster') ??
        shortStringProblem(m.id, 'id') ??
        addressProblem(m.address) ??
        kindsProblem(m.kinds) ??
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
    case 'seed.claim':
      return leaseId() ?? shortStringProblem(m.kind, 'kind') ?? shard();
    case 'seed.release':
      return (
        shortStringProblem(m.kind, 'kind') ??
        shard() ??
        (Number.isSafeInteger(m.epoch) && (m.epoch as number) >= 0
          ? undefined
          : 'epoch must be a non-negative integer')
      );
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

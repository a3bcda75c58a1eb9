import { Props, type ActorSystem, type PID } from '@granary/core';
import { MAX_SHARD_COUNT } from '../placement/kind-ranges';
import {
  MAX_MEMBER_KINDS,
  MAX_TOPOLOGY_KINDS,
  memberProblem,
  statedAddressProblem,
} from './member-record';
import type { Member, Topology } from './topology';

/** Name of the actor every member with a remote runs to tell clients the topology. */
export const TOPOLOGY_SERVICE = '$granary-topology';

/** What a client sends the topology service. */
export const TOPOLOGY_QUERY = 'granary.topology?';

/** The topology service's answer: the member's view, with the shard counts of its kinds. */
export interface TopologySnapshot {
  readonly version: number;
  readonly members: readonly Member[];
  /** Shard count of each kind the answering member hosts. */
  readonly shardCounts: Readonly<Record<string, number>>;
}

/**
 * Starts the topology service on a member: clients that are not members (`GranaryClient` with
 * `gateways`) ask it for the topology and then route each call straight to the owner. It
 * answers only the query and ignores everything else.
 */
export function startTopologyService(
  system: ActorSystem,
  topology: () => Topology,
  shardCounts: () => Readonly<Record<string, number>>,
): PID {
  return system.root.spawnNamed(
    Props.fromFunc((ctx) => {
      if (ctx.message !== TOPOLOGY_QUERY) return;
      const t = topology();
      const snapshot: TopologySnapshot = {
        version: t.version,
        members: t.members.map((m) => ({ ...m, kinds: [...m.kinds] })),
        shardCounts: shardCounts(),
      };
      ctx.respond(snapshot);
    }),
    TOPOLOGY_SERVICE,
  );
}

/**
 * Why `value` is not a well-formed TopologySnapshot (undefined when it is). It came over the
 * wire from a member a client asked: every member record is checked as any record from outside
 * (memberProblem), the members host at most MAX_TOPOLOGY_KINDS distinct kinds, and every shard
 * count is an integer in [1, MAX_SHARD_COUNT] (a count of 0 made every call of the kind fail as
 * the caller's InvalidArgumentError).
 */
export function topologySnapshotProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'not an object';
  const v = value as Partial<Record<keyof TopologySnapshot, unknown>>;
  if (!Number.isSafeInteger(v.version) || (v.version as number) < 0)
    return 'version must be a non-negative integer';
  if (!Array.isArray(v.members)) return 'members must be an array';
  for (const m of v.members as unknown[]) {
    const p = memberProblem(m, statedAddressProblem);
    if (p !== undefined)
      return `member ${JSON.stringify((m as { id?: unknown } | null)?.id)?.slice(0, 64)}: ${p}`;
  }
  const kinds = new Set((v.members as Member[]).flatMap((m) => m.kinds));
  if (kinds.size > MAX_TOPOLOGY_KINDS)
    return `members host ${kinds.size} kinds, over ${MAX_TOPOLOGY_KINDS}`;
  const counts = v.shardCounts;
  if (typeof counts !== 'object' || counts === null || Array.isArray(counts))
    return 'shardCounts must be an object';
  const entries = Object.entries(counts);
  if (entries.length > MAX_MEMBER_KINDS) return `shardCounts has over ${MAX_MEMBER_KINDS} kinds`;
  for (const [kind, n] of entries) {
    if (!Number.isInteger(n) || (n as number) < 1 || (n as number) > MAX_SHARD_COUNT)
      return `shardCounts of ${JSON.stringify(kind).slice(0, 64)} must be an integer in [1, ${MAX_SHARD_COUNT}]`;
  }
  return undefined;
}

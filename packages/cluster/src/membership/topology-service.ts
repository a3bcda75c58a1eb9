import { Props, type ActorSystem, type PID } from '@granary/core';
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

/** True when `value` has the shape of a TopologySnapshot (it came over the wire). */
export function isTopologySnapshot(value: unknown): value is TopologySnapshot {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Partial<TopologySnapshot>;
  return (
    typeof v.version === 'number' &&
    Array.isArray(v.members) &&
    v.members.every(
      (m: Partial<Member>) =>
        typeof m?.id === 'string' &&
        typeof m.address === 'string' &&
        Array.isArray(m.kinds) &&
        typeof m.incarnation === 'number' &&
        typeof m.status === 'string',
    ) &&
    typeof v.shardCounts === 'object' &&
    v.shardCounts !== null
  );
}

import type { Member, Topology } from './topology';

/** Members that appeared and disappeared between two topologies (an incarnation change is both). */
export interface TopologyDiff {
  joined: Member[];
  left: Member[];
}

/** Compares by id and incarnation; status changes alone are neither a join nor a leave. */
export function diffTopology(before: Topology, after: Topology): TopologyDiff {
  const old = new Map(before.members.map((m) => [m.id, m]));
  const now = new Map(after.members.map((m) => [m.id, m]));
  const joined: Member[] = [];
  const left: Member[] = [];
  for (const m of after.members) {
    const prev = old.get(m.id);
    if (!prev || prev.incarnation !== m.incarnation) joined.push(m);
  }
  for (const m of before.members) {
    const next = now.get(m.id);
    if (!next || next.incarnation !== m.incarnation) left.push(m);
  }
  return { joined, left };
}

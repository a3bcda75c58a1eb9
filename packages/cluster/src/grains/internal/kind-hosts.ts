import { MAX_TOPOLOGY_KINDS } from '../../membership/member-record';
import type { Topology } from '../../membership/topology';

/**
 * Most dropped hosts remembered per kind: the number only details a NoHostError, and a
 * topology source naming new members every time (a hostile gateway) grew it without end.
 */
const MAX_DROPPED_PER_KIND = 1024;

/**
 * What a caller remembers of the kinds' hosts across topologies: which kinds it has seen hosted
 * (a call to one of them while no host is up waits for one, and fails with NoHostError, not
 * UnknownKindError), and which hosts dropped out of the membership without leaving in order
 * (their lease expired: fenced or dead) and have not come back. At most MAX_TOPOLOGY_KINDS kinds
 * are remembered (past it, those no member hosts now are forgotten, oldest first: a gateway
 * naming new kinds in every answer grew the set without end), each with at most
 * MAX_DROPPED_PER_KIND dropped hosts.
 */
export class KindHosts {
  private readonly seen = new Set<string>();
  /** Per kind, ids of hosts that dropped out. */
  private readonly dropped = new Map<string, Set<string>>();
  private last: Topology | undefined = undefined;

  /** True if some member of `topology` hosts `kind` or one did in an earlier topology. */
  known(kind: string, topology: Topology): boolean {
    if (this.seen.has(kind)) return true;
    if (!topology.members.some((m) => m.kinds.includes(kind))) return false;
    this.seen.add(kind);
    return true;
  }

  /** A new topology: hosts that vanished without leaving in order are counted as dropped. */
  topologyChanged(topology: Topology): void {
    const previous = this.last;
    this.last = topology;
    const now = new Map(topology.members.map((m) => [m.id, m]));
    for (const m of topology.members) {
      for (const k of m.kinds) {
        this.seen.add(k);
        this.dropped.get(k)?.delete(m.id);
      }
    }
    if (previous === undefined || topology.members.length === 0) return this.forgetPast(topology);
    for (const m of previous.members) {
      if (now.has(m.id) || m.status === 'leaving') continue;
      for (const k of m.kinds) {
        let ids = this.dropped.get(k);
        if (ids === undefined) this.dropped.set(k, (ids = new Set()));
        if (ids.size < MAX_DROPPED_PER_KIND) ids.add(m.id);
      }
    }
    this.forgetPast(topology);
  }

  /** Past MAX_TOPOLOGY_KINDS, forgets the oldest kinds `topology` does not host. */
  private forgetPast(topology: Topology): void {
    if (this.seen.size <= MAX_TOPOLOGY_KINDS) return;
    const hosted = new Set(topology.members.flatMap((m) => m.kinds));
    for (const k of this.seen) {
      if (this.seen.size <= MAX_TOPOLOGY_KINDS) break;
      if (hosted.has(k)) continue;
      this.seen.delete(k);
      this.dropped.delete(k);
    }
  }

  /** What a NoHostError says of `kind`'s hosts under `topology`. */
  details(kind: string, topology: Topology): { leaving: number; dropped: number } {
    return {
      leaving: topology.members.filter((m) => m.status === 'leaving' && m.kinds.includes(kind))
        .length,
      dropped: this.dropped.get(kind)?.size ?? 0,
    };
  }
}

import type { Topology } from '../membership/topology';

/**
 * The shard count of each kind, as a member sees it: its own kinds' (fixed at start), else what
 * the members hosting the kind state in the topology, else the cluster default.
 */
export class ShardCounts {
  /** Shard counts of the kinds members host, under `topology` (see of). */
  private elsewhere: { topology: Topology; counts: Map<string, number> } | undefined;

  constructor(
    /** The kinds this member hosts or claims, and their shard counts. */
    readonly own: Map<string, number>,
    /** The cluster's `shardCount`, for a kind no member states. */
    private readonly defaultCount: number,
  ) {}

  /** Shard count of a kind (its own, else the cluster default), under `topology`. */
  of(kind: string, topology: Topology): number {
    const own = this.own.get(kind);
    if (own !== undefined) return own;
    // A kind hosted elsewhere: its hosts say how many shards it has. Looked up in a table built
    // once per topology, not by a pass over the members: a caller asks on every call whose
    // grain reference is not cached (more than 10,000 identities in use), and at 1,000 members a
    // pass costs as much as the rest of the call.
    let table = this.elsewhere;
    if (table?.topology !== topology) {
      const counts = new Map<string, number>();
      for (const m of topology.members) {
        for (const [k, shards] of Object.entries(m.kindShards ?? {})) {
          if (shards && !counts.has(k)) counts.set(k, shards.shardCount);
        }
      }
      table = this.elsewhere = { topology, counts };
    }
    return table.counts.get(kind) ?? this.defaultCount;
  }
}

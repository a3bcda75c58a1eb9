import type { Member, Topology } from '../membership/topology';
import { rangeOfShard } from './kind-ranges';
import { TopologyPlacement } from './topology-placement';

/**
 * Placements are cached per topology object: a topology is an immutable snapshot and every change
 * makes a new object, so each is placed once. The WeakMap lets old topologies (and their rings)
 * be collected.
 */
const PLACEMENTS = new WeakMap<Topology, TopologyPlacement>();
/** The placement computed last: the next topology's placement derives from it when close. */
let latest: TopologyPlacement | undefined;

/** The placement of `topology` (derived from the last one computed when they are close). */
export function placementOf(topology: Topology): TopologyPlacement {
  let p = PLACEMENTS.get(topology);
  if (!p) {
    // Only one step back is kept: older placements must stay collectable.
    latest?.forgetPrevious();
    p = new TopologyPlacement(topology, latest);
    PLACEMENTS.set(topology, p);
    latest = p;
  }
  return p;
}

/**
 * The desired owner of a shard: the kind's shards are cut into contiguous ranges (`claimRanges`,
 * by default one shard per range), each range sits at a hash of `<kind>/<range>` on a
 * consistent-hash ring over the `up` members that host the kind, and belongs to the member of the
 * next point on the ring. Every member computes the same owner from the same topology. Undefined
 * when no up member hosts the kind.
 *
 * @example
 * const owner = ownerOf('Ponger', shardOf('p-1', 16384), cluster.topology);
 */
export function ownerOf(kind: string, shard: number, topology: Topology): Member | undefined {
  const p = placementOf(topology);
  const kp = p.kind(kind);
  return p.owner(kp, kp.shards ? rangeOfShard(shard, kp.shards) : shard);
}

/** The up members that host `kind` under `topology` (the ring's members), sorted by id. */
export function hostsOf(kind: string, topology: Topology): Member[] {
  return placementOf(topology).hosts(kind);
}

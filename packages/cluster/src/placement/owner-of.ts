import HashRing from 'hashring';
import type { Member, Topology } from '../membership/topology';

/**
 * Virtual nodes per member on the ring. hashring places 4 points per vnode (ketama), so 100 gives
 * 400 points per member: each member's share stays within a few percent of 1/n, which keeps the
 * fraction of shards that move on a join close to 1/(n+1).
 */
const RING_VNODES = 100;

/** The owners of one kind under one topology, filled lazily shard by shard. */
interface KindRing {
  ring: HashRing | undefined;
  byId: Map<string, Member>;
  owners: Map<number, Member | undefined>;
}

/**
 * Rings are cached per topology object: a topology is an immutable snapshot and every change makes
 * a new object, so a ring is built once per topology version and per kind, and lookups after the
 * first are a Map hit. The WeakMap lets old topologies (and their rings) be collected.
 */
const RINGS = new WeakMap<Topology, Map<string, KindRing>>();

function ringFor(kind: string, topology: Topology): KindRing {
  let kinds = RINGS.get(topology);
  if (!kinds) {
    kinds = new Map();
    RINGS.set(topology, kinds);
  }
  let entry = kinds.get(kind);
  if (!entry) {
    // A malformed member (kinds not a list) is skipped: providers log it where it came in.
    const hosts = topology.members.filter(
      (m) => m.status === 'up' && Array.isArray(m.kinds) && m.kinds.includes(kind),
    );
    const byId = new Map(hosts.map((m) => [m.id, m]));
    const servers: Record<string, { vnodes: number }> = {};
    for (const m of hosts) servers[m.id] = { vnodes: RING_VNODES };
    // hashring keeps its own LRU of key lookups; ours (owners) makes it redundant.
    const ring =
      hosts.length > 0 ? new HashRing(servers, 'md5', { 'max cache size': 1 }) : undefined;
    entry = { ring, byId, owners: new Map() };
    kinds.set(kind, entry);
  }
  return entry;
}

/**
 * The desired owner of a shard: a consistent-hash ring (hashring, md5, ketama) over the `up`
 * members that host `kind`, keyed by `<kind>/<shard>`. Every member computes the same owner from
 * the same topology. Undefined when no up member hosts the kind.
 *
 * @example
 * const owner = ownerOf('Ponger', shardOf('p-1', 256), cluster.topology);
 */
export function ownerOf(kind: string, shard: number, topology: Topology): Member | undefined {
  const entry = ringFor(kind, topology);
  if (entry.owners.has(shard)) return entry.owners.get(shard);
  const id = entry.ring?.get(`${kind}/${shard}`);
  const owner = id === undefined ? undefined : entry.byId.get(id);
  entry.owners.set(shard, owner);
  return owner;
}

/** The up members that host `kind` under `topology` (the ring's members), sorted by id. */
export function hostsOf(kind: string, topology: Topology): Member[] {
  return [...ringFor(kind, topology).byId.values()];
}

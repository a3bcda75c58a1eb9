import type { Member, Topology } from '../membership/topology';
import { rangePositions, type KindShards } from './kind-ranges';
import { lowerBound, memberPoints, mix32, Ring } from './ring';
import { fnv1a32 } from './shard-of';

/**
 * A derived ring may add and remove at most this many members (or 1% of the ring, if more);
 * beyond that a fresh build is cheaper than patching point by point.
 */
const MAX_INCREMENTAL_CHANGES = 16;

/** The placement of one kind under one topology. */
export interface KindPlacement {
  readonly kind: string;
  /** The ring over the kind's up hosts (shared by kinds with the same hosts). */
  readonly ring: Ring;
  /** How the kind's shards are cut into ranges, from its hosts; undefined if none says. */
  readonly shards: KindShards | undefined;
  /** Ring slot of each range's desired owner (-1: no host); empty without `shards`. */
  readonly owners: Int32Array;
}

/**
 * Where every range of every kind belongs under one topology, computed lazily per kind and, when
 * a previous topology's placement is at hand, incrementally: the ring of a host set that gained
 * or lost a few members is the old ring with their points inserted or deleted, and only the
 * ranges in the arcs those points cut (or that the leavers owned) are looked up again. So a
 * membership change costs O(points moved + ranges moved), not O(members x points + ranges).
 * Kinds whose hosts are the same members share one ring.
 */
export class TopologyPlacement {
  private readonly kinds = new Map<string, KindPlacement>();
  /** Rings of this topology by host-set key (ids joined), each built or derived once. */
  private readonly rings = new Map<string, Ring>();
  private members: Map<string, Member> | undefined;

  constructor(
    readonly topology: Topology,
    /** The placement of an earlier topology to derive from (dropped once used). */
    private previous: TopologyPlacement | undefined,
  ) {}

  /** Members by id (built on first use). */
  get byId(): ReadonlyMap<string, Member> {
    this.members ??= new Map(this.topology.members.map((m) => [m.id, m]));
    return this.members;
  }

  /** Drops the link to the earlier placement (kinds not computed yet are then built fresh). */
  forgetPrevious(): void {
    this.previous = undefined;
    // The rings' links to the rings they were patched from would keep every old ring alive.
    for (const ring of this.rings.values()) ring.derivation = undefined;
  }

  /** The placement of `kind` (computed on first use). */
  kind(kind: string): KindPlacement {
    let kp = this.kinds.get(kind);
    if (!kp) {
      kp = this.compute(kind);
      this.kinds.set(kind, kp);
    }
    return kp;
  }

  /** The up members hosting `kind`, sorted by id. */
  hosts(kind: string): Member[] {
    // A malformed member (kinds not a list) is skipped: providers log it where it came in.
    return this.topology.members.filter(
      (m) => m.status === 'up' && Array.isArray(m.kinds) && m.kinds.includes(kind),
    );
  }

  /** The desired owner of a range (placements with `shards`), or of a shard index otherwise. */
  owner(kp: KindPlacement, rangeOrShard: number): Member | undefined {
    const slot = kp.shards
      ? kp.owners[rangeOrShard]
      : kp.ring.lookup(mix32(fnv1a32(`${kp.kind}/${rangeOrShard}`)));
    return slot === undefined || slot < 0 ? undefined : this.byId.get(kp.ring.ids[slot]);
  }

  private compute(kind: string): KindPlacement {
    const hosts = this.hosts(kind);
    const ids = hosts.map((m) => m.id);
    const shards = kindShardsOf(kind, hosts);
    const base = this.previous?.kinds.get(kind);
    const ring = this.ringFor(ids, base?.ring);
    if (!shards) return { kind, ring, shards, owners: new Int32Array(0) };
    const positions = rangePositions(kind, shards.ranges);
    let owners: Int32Array;
    if (
      base &&
      base.ring !== ring &&
      ring.derivation?.base === base.ring &&
      sameShards(base.shards, shards)
    ) {
      owners = deriveOwners(base, ring, positions.byRange, positions.sorted, positions.rangeAt);
    } else if (base && base.ring === ring && sameShards(base.shards, shards)) {
      owners = base.owners;
    } else {
      owners = new Int32Array(shards.ranges);
      for (let r = 0; r < shards.ranges; r++) owners[r] = ring.lookup(positions.byRange[r]);
    }
    return { kind, ring, shards, owners };
  }

  /**
   * The ring over `ids`, once per host set: the base ring itself if its members are the same,
   * the base ring patched if it is close, else one built from scratch.
   */
  private ringFor(ids: string[], base: Ring | undefined): Ring {
    const key = ids.join('\n');
    let ring = this.rings.get(key);
    if (ring) return ring;
    if (base) {
      const { add, remove } = diffIds(base, ids);
      const limit = Math.max(MAX_INCREMENTAL_CHANGES, Math.ceil(ids.length / 100));
      if (add.length === 0 && remove.length === 0) ring = base;
      // A slot table twice the live members (much churn) is rebuilt to stay compact.
      else if (
        add.length + remove.length <= limit &&
        base.ids.length + add.length < 2 * ids.length + 64
      ) {
        ring = base.with(add, remove);
      }
    }
    ring ??= Ring.build(ids);
    this.rings.set(key, ring);
    return ring;
  }
}

/** Members of `ids` not on the ring, and ring members not in `ids`. */
function diffIds(ring: Ring, ids: string[]): { add: string[]; remove: string[] } {
  const want = new Set(ids);
  const add = ids.filter((id) => ring.slot(id) === undefined);
  const remove = ring.ids.filter((id) => id !== '' && !want.has(id));
  return { add, remove };
}

/**
 * The owners of the ranges under `ring`, derived from the base placement: ranges the removed
 * members owned, and ranges in the arcs the added members' points cut, are looked up on the new
 * ring; every other range keeps its owner (its slot means the same member on both rings).
 */
function deriveOwners(
  base: KindPlacement,
  ring: Ring,
  byRange: Uint32Array,
  sorted: Uint32Array,
  rangeAt: Int32Array,
): Int32Array {
  const owners = base.owners.slice();
  const n = owners.length;
  const { added, removed } = ring.derivation!;
  if (removed.length > 0) {
    const gone = new Uint8Array(ring.ids.length);
    for (const s of removed) gone[s] = 1;
    for (let r = 0; r < n; r++) {
      const o = owners[r];
      if (o >= 0 && gone[o]) owners[r] = ring.lookup(byRange[r]);
    }
  }
  const points = ring.points;
  const total = points.length;
  for (const slot of added) {
    for (const q of memberPoints(ring.ids[slot])) {
      const i = lowerBound(points, total, q);
      const pred = points[(i - 1 + total) % total];
      // Ranges in (pred, q], wrapping past 2^32 when pred >= q.
      const visit = (from: number, to: number): void => {
        for (let j = from; j < to; j++) owners[rangeAt[j]] = ring.lookup(sorted[j]);
      };
      if (pred < q) visit(lowerBound(sorted, n, pred + 1), lowerBound(sorted, n, q + 1));
      else {
        visit(lowerBound(sorted, n, pred + 1), n);
        visit(0, lowerBound(sorted, n, q + 1));
      }
    }
  }
  return owners;
}

/** How a kind is cut into ranges, as its first host advertises it (hosts must agree). */
function kindShardsOf(kind: string, hosts: Member[]): KindShards | undefined {
  for (const m of hosts) {
    const k = m.kindShards?.[kind];
    if (k) return k;
  }
  return undefined;
}

function sameShards(a: KindShards | undefined, b: KindShards | undefined): boolean {
  return a?.shardCount === b?.shardCount && a?.ranges === b?.ranges;
}

import { mix32, radixSortPairs } from './ring';
import { fnv1a32, fnv1a32WithNumber } from './shard-of';

/**
 * The most shards a kind may have: shard * ranges stays an exact integer in a double, and a
 * member's per-kind tables stay small.
 */
export const MAX_SHARD_COUNT = 1 << 20;

/**
 * Default number of claim ranges per kind (`claimRanges`): placement and claims work on at most
 * this many contiguous ranges of shards. 16,384 spreads a kind over ~1,600 members at 10 ranges
 * each (the rule of thumb for even load) while one join at 32 members writes ~500 claims per
 * kind; it is also the default shard count, so by default a range is one shard.
 */
export const DEFAULT_CLAIM_RANGES = 16_384;

/** How a kind's shards are cut into claim ranges; every host of the kind must agree. */
export interface KindShards {
  /** Shards the kind's identities hash into. */
  shardCount: number;
  /** Contiguous ranges of shards that are placed and claimed as one (<= shardCount). */
  ranges: number;
}

/** The range a shard falls in: floor(shard * ranges / shardCount). */
export function rangeOfShard(shard: number, k: KindShards): number {
  return k.ranges === k.shardCount ? shard : Math.floor((shard * k.ranges) / k.shardCount);
}

/** The first shard of a range (the range covers [first(r), first(r + 1))). */
export function firstShardOf(range: number, k: KindShards): number {
  return k.ranges === k.shardCount ? range : Math.ceil((range * k.shardCount) / k.ranges);
}

/** Ring positions of one kind's ranges: by range, and sorted (with the range at each). */
export interface RangePositions {
  byRange: Uint32Array;
  sorted: Uint32Array;
  rangeAt: Int32Array;
}

/** Kinds times range counts seen: a handful, computed once each. */
const POSITIONS = new Map<string, RangePositions>();

/**
 * Where each range of `kind` sits on the ring: a hash of `<kind>/<range>`, so kinds with the same
 * hosts still spread differently over them.
 */
export function rangePositions(kind: string, ranges: number): RangePositions {
  const key = `${kind}\n${ranges}`;
  let p = POSITIONS.get(key);
  if (!p) {
    const byRange = new Uint32Array(ranges);
    const prefix = fnv1a32(`${kind}/`);
    for (let r = 0; r < ranges; r++) byRange[r] = mix32(fnv1a32WithNumber(prefix, r));
    const sorted = byRange.slice();
    const rangeAt = new Int32Array(ranges);
    for (let r = 0; r < ranges; r++) rangeAt[r] = r;
    radixSortPairs(sorted, rangeAt);
    p = { byRange, sorted, rangeAt };
    POSITIONS.set(key, p);
  }
  return p;
}

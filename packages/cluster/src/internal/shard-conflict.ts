import type { Member } from '../membership/topology';
import type { KindShards } from '../placement/kind-ranges';

/**
 * The first kind this member hosts that another member cuts into shards differently, described
 * with both values (for JoinRefusedError); undefined when all agree.
 */
export function shardConflict(
  selfId: string,
  mine: Readonly<Record<string, KindShards>>,
  members: readonly Member[],
): string | undefined {
  for (const [kind, own] of Object.entries(mine)) {
    for (const m of members) {
      const theirs = m.kindShards?.[kind];
      if (m.id === selfId || !theirs || !m.kinds.includes(kind)) continue;
      if (theirs.shardCount !== own.shardCount || theirs.ranges !== own.ranges) {
        return (
          `kind '${kind}': this member (${selfId}) has shardCount ${own.shardCount} ` +
          `(${own.ranges} claim ranges), member '${m.id}' has shardCount ${theirs.shardCount} ` +
          `(${theirs.ranges} claim ranges); every host of a kind must use the same shardCount ` +
          `and claimRanges`
        );
      }
    }
  }
  return undefined;
}

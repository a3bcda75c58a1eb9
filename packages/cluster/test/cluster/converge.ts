import { waitUntil } from '@granary/testkit';
import type { Cluster } from '../../src/cluster';
import { ownerOf } from '../../src/placement/owner-of';

/** The cluster events after which membership and shard ownership may have changed. */
const MEMBERSHIP_EVENTS = [
  'topology',
  'shard-acquired',
  'shard-released',
  'lease-restored',
] as const;

/**
 * Resolves once `check()` returns true, re-checking after every topology and shard event of the
 * given clusters (no polling); rejects with `what` after `timeoutMs`.
 */
export function waitForClusters(
  clusters: Cluster[],
  check: () => boolean,
  what: string,
  timeoutMs = 5000,
): Promise<void> {
  const on = clusters.flatMap((c) => MEMBERSHIP_EVENTS.map((e) => (l: () => void) => c.on(e, l)));
  return waitUntil(check, what, { on, timeoutMs });
}

/**
 * True when every cluster sees the same topology (version and member ids) and every shard of
 * `kind` is served by exactly one of them: its desired owner.
 */
export function agreed(clusters: Cluster[], kind: string, shardCount: number): boolean {
  const [first] = clusters;
  const ids = first.topology.members.map((m) => `${m.id}:${m.status}`).join(',');
  for (const c of clusters) {
    if (c.topology.version !== first.topology.version) return false;
    if (c.topology.members.map((m) => `${m.id}:${m.status}`).join(',') !== ids) return false;
  }
  for (let s = 0; s < shardCount; s++) {
    const owner = ownerOf(kind, s, first.topology);
    const servers = clusters.filter((c) => c.canServe(kind, s));
    if (servers.length !== 1 || servers[0].id !== owner?.id) return false;
  }
  return true;
}

/** shard -> { owner, epoch } as seen from the clusters' held claims. */
export function claimMap(
  clusters: Cluster[],
  kind: string,
): Map<number, { owner: string; epoch: number }> {
  const map = new Map<number, { owner: string; epoch: number }>();
  for (const c of clusters) {
    for (const s of c.heldShards(kind)) map.set(s, { owner: c.id, epoch: c.epochOf(kind, s) ?? 0 });
  }
  return map;
}

import type { HeldClaims } from '../providers/cluster-provider';
import type { KindClaims } from './kind-claims';

/** What the audit does about what it finds. */
export interface AuditActions {
  /** Whether this member is the desired owner of the range now. */
  wanted(k: KindClaims, range: number): boolean;
  /** Claim (or release) the range the usual way. */
  reconcile(k: KindClaims, range: number): void;
  /** Delete a claim the store holds for this member that it does not want (k: undefined if the
   * kind or range is not one of this member's). */
  releaseStray(k: KindClaims | undefined, kind: string, range: number): void;
  /** A claim this member believes it holds is gone from the store. */
  vanished(k: KindClaims, range: number): void;
}

/**
 * Compares the claims the store holds under this member's registration with what it holds:
 * a claim it does not know of is claimed properly if it is the desired owner (the claim answers
 * with the existing epoch) and released otherwise; a claim it believes it holds that the store
 * does not list, and that is older than the read, vanished. Ranges with an operation in flight
 * are left to it: their outcome decides.
 */
export function auditClaims(
  held: HeldClaims,
  kinds: ReadonlyMap<string, KindClaims>,
  act: AuditActions,
): void {
  const inStore = new Map<string, Set<number>>();
  for (const c of held.claims) {
    const k = kinds.get(c.kind);
    if (!k || c.shard >= k.ranges) {
      act.releaseStray(undefined, c.kind, c.shard); // not a kind or range of this member's
      continue;
    }
    let set = inStore.get(c.kind);
    if (!set) inStore.set(c.kind, (set = new Set()));
    set.add(c.shard);
    if (k.busy[c.shard] || k.epochs[c.shard] > 0) continue;
    if (act.wanted(k, c.shard)) act.reconcile(k, c.shard);
    else act.releaseStray(k, c.kind, c.shard);
  }
  for (const k of kinds.values()) {
    const store = inStore.get(k.name);
    for (let r = 0; r < k.ranges; r++) {
      const epoch = k.epochs[r];
      if (epoch > 0 && epoch <= held.revision && !k.busy[r] && !store?.has(r)) act.vanished(k, r);
    }
  }
}

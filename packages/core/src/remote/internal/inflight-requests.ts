/** Prune futures that timed out locally once the table doubled since the last prune. */
const MIN_PRUNE_SIZE = 1024;

/**
 * Local request futures waiting on a reply from each remote address, so that a node's death
 * rejects them at once instead of at their timeout. A reply removes its entry; entries of
 * futures that gave up (timeout, abort) are pruned lazily with `isAlive`.
 */
export class InflightRequests {
  private readonly byAddress = new Map<string, Set<string>>();
  private pruneAt = MIN_PRUNE_SIZE;

  constructor(private readonly isAlive: (futureId: string) => boolean) {}

  add(address: string, futureId: string): void {
    let ids = this.byAddress.get(address);
    if (!ids) this.byAddress.set(address, (ids = new Set()));
    ids.add(futureId);
    if (ids.size >= this.pruneAt) {
      for (const id of ids) if (!this.isAlive(id)) ids.delete(id);
      this.pruneAt = Math.max(MIN_PRUNE_SIZE, ids.size * 2);
    }
  }

  /** A reply from `address` reached the future. */
  settled(address: string, futureId: string): void {
    this.byAddress.get(address)?.delete(futureId);
  }

  /** Removes and returns the futures waiting on `address`. */
  drain(address: string): string[] {
    const ids = this.byAddress.get(address);
    if (!ids) return [];
    this.byAddress.delete(address);
    return [...ids];
  }

  /** Every address with waiting futures. */
  addresses(): string[] {
    return [...this.byAddress.keys()];
  }
}

import type { PID } from '../../pid';

/**
 * Which local watchers watch which actors of which remote address, so that when a node dies
 * every watcher can be told `address-terminated` without asking the dead node.
 */
export class WatchTable {
  /** address → watchee id → watcher key → watcher */
  private readonly byAddress = new Map<string, Map<string, Map<string, PID>>>();

  add(watchee: PID, watcher: PID): void {
    let byWatchee = this.byAddress.get(watchee.address);
    if (!byWatchee) this.byAddress.set(watchee.address, (byWatchee = new Map()));
    let watchers = byWatchee.get(watchee.id);
    if (!watchers) byWatchee.set(watchee.id, (watchers = new Map()));
    watchers.set(watcher.toString(), watcher);
  }

  remove(watchee: PID, watcher: PID): void {
    const byWatchee = this.byAddress.get(watchee.address);
    const watchers = byWatchee?.get(watchee.id);
    if (!watchers) return;
    watchers.delete(watcher.toString());
    if (watchers.size === 0) byWatchee!.delete(watchee.id);
  }

  /** Forgets one watcher of a watchee that reported its own Terminated. */
  terminated(watchee: PID, watcher: PID): void {
    this.remove(watchee, watcher);
  }

  /** Removes and returns every (watchee id, watcher) pair of an address. */
  drain(address: string): Array<[string, PID]> {
    const byWatchee = this.byAddress.get(address);
    if (!byWatchee) return [];
    this.byAddress.delete(address);
    const pairs: Array<[string, PID]> = [];
    for (const [id, watchers] of byWatchee)
      for (const watcher of watchers.values()) pairs.push([id, watcher]);
    return pairs;
  }

  /** Watched remote actors in total (for tests and stats). */
  get size(): number {
    let n = 0;
    for (const byWatchee of this.byAddress.values())
      for (const w of byWatchee.values()) n += w.size;
    return n;
  }
}

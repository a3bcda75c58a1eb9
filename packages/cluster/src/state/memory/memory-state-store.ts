import { InconsistentStateError } from '../errors';
import { checkKey, checkWriteArguments } from '../internal/check-arguments';
import type { StateRecord, StateStore, StateWriteOptions } from '../state-store';

/** One grain's entry; `state` undefined is a tombstone left by clear. */
interface Entry {
  state: Uint8Array | undefined;
  version: number;
  epoch: number;
}

/**
 * A {@link StateStore} in process memory with exactly the semantics of `RedisStateStore`
 * (version and epoch checks, tombstones). For tests and the demo: state is lost with the process.
 *
 * @example
 * const store = new MemoryStateStore();
 * const v1 = await store.write('counter', 'a', bytes, { expectedVersion: null, epoch: 7 });
 */
export class MemoryStateStore implements StateStore {
  private readonly entries = new Map<string, Entry>();

  /** Number of grains with live state (tombstones excluded). */
  get size(): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.state) n++;
    return n;
  }

  async read(kind: string, id: string): Promise<StateRecord | null> {
    checkKey(kind, id);
    const entry = this.entries.get(keyOf(kind, id));
    if (!entry?.state) return null;
    // new Uint8Array(x) copies: Buffer#slice would return a view of the stored bytes.
    return { state: new Uint8Array(entry.state), version: entry.version };
  }

  async write(
    kind: string,
    id: string,
    state: Uint8Array,
    options: StateWriteOptions,
  ): Promise<number> {
    checkWriteArguments(kind, id, options, state);
    const key = keyOf(kind, id);
    const entry = this.entries.get(key);
    this.check(kind, id, entry, options, 'write');
    const version = (entry?.version ?? 0) + 1;
    this.entries.set(key, { state: new Uint8Array(state), version, epoch: options.epoch });
    return version;
  }

  async clear(kind: string, id: string, options: StateWriteOptions): Promise<void> {
    checkWriteArguments(kind, id, options);
    const key = keyOf(kind, id);
    const entry = this.entries.get(key);
    this.check(kind, id, entry, options, 'clear');
    this.entries.set(key, {
      state: undefined,
      version: (entry?.version ?? 0) + 1,
      epoch: options.epoch,
    });
  }

  async close(): Promise<void> {}

  /** The same order as the Redis script: epoch first (a stale owner), then version. */
  private check(
    kind: string,
    id: string,
    entry: Entry | undefined,
    { expectedVersion, epoch }: StateWriteOptions,
    operation: 'write' | 'clear',
  ): void {
    if (entry && epoch < entry.epoch) {
      throw new InconsistentStateError(kind, id, 'epoch', epoch, entry.epoch, operation);
    }
    const live = entry?.state ? entry.version : null;
    if (live !== expectedVersion) {
      throw new InconsistentStateError(kind, id, 'version', expectedVersion, live, operation);
    }
  }
}

function keyOf(kind: string, id: string): string {
  return `${kind}\u0000${id}`;
}

import type { Logger } from '@granary/core';

/** Stored state of one grain: opaque bytes (see StateCodec) and the version that wrote them. */
export interface StateRecord {
  state: Uint8Array;
  /** Starts at 1, grows by one on every write and clear of the grain; never reused. */
  version: number;
}

/** The fencing arguments of every write and clear. */
export interface StateWriteOptions {
  /**
   * The version the writer loaded (`StateRecord.version`), or `null` if it loaded nothing.
   * The write is rejected unless it is still the stored one.
   */
  expectedVersion: number | null;
  /**
   * The writer's shard epoch (the claim's revision). Rejected if older than the epoch stored by
   * the last write or clear, so a node that lost its shard can never overwrite the new owner.
   * Epochs must grow for as long as the stored state lives (etcd revisions do); a provider whose
   * counter restarts from zero would have every write to an existing grain rejected.
   */
  epoch: number;
}

/**
 * Where grains keep their state. Every write and clear is one atomic compare-and-set on
 * version AND epoch; a conflict rejects with `InconsistentStateError` and changes nothing.
 * An unreachable store rejects with `StateUnavailableError` within a bounded time.
 *
 * A clear leaves a tombstone that keeps the version sequence and the epoch, so a stale writer is
 * still fenced after the state is gone; `read` returns null for it, and a write that expects
 * `null` may recreate the state.
 *
 * Implementations: `RedisStateStore` (production), `MemoryStateStore` (tests, demo).
 */
export interface StateStore {
  /** The state of `kind/id`, or null if never written or cleared. */
  read(kind: string, id: string): Promise<StateRecord | null>;
  /** Stores `state` if version and epoch allow it; resolves with the new version. */
  write(kind: string, id: string, state: Uint8Array, options: StateWriteOptions): Promise<number>;
  /** Removes the state if version and epoch allow it (leaves a tombstone for fencing). */
  clear(kind: string, id: string, options: StateWriteOptions): Promise<void>;
  /** Releases connections the store opened itself (a client passed in is left open). */
  close(): Promise<void>;
  /**
   * Connects and checks that the store can keep what it promises (RedisStateStore: its
   * durability level and identity marker); rejects if it cannot. Idempotent. Cluster.start
   * awaits it for the stores in `stateStores`, so a member whose store falls short never joins.
   */
  open?(): Promise<void>;
  /**
   * Optional: takes the logger of the member whose grains use the store (bound with
   * `{ node, component: 'state' }`), for a store that was given no logger of its own.
   */
  useLogger?(logger: Logger): void;
}

import { registerErrorClasses } from '@granary/core';
import { ClusterError } from '../errors';

/**
 * Errors of grain state. Every class has a fixed `name` and `code`; `StateStoreError.is(err)`
 * matches any of them (they are also `ClusterError`s). Bad arguments and options of the state
 * API are core's `InvalidArgumentError` and `InvalidOptionError`.
 */

/** What a write or clear was checked against when it was rejected. */
export type StateConflictReason = 'version' | 'epoch';

/**
 * Base of every state error, and the error for an unexpected reply of the backing store
 * (for example a key of another type under the state prefix).
 */
export class StateStoreError extends ClusterError {
  static override readonly code: string = 'ERR_STATE_STORE';
  override readonly name: string = 'StateStoreError';
}

/**
 * A write or clear was rejected: the stored version is not the one the writer loaded
 * (`reason: 'version'`, another activation wrote since), or the stored shard epoch is newer than
 * the writer's (`reason: 'epoch'`, the writer no longer owns the shard). Nothing was written.
 * The activation that gets it must deactivate; the next call reloads.
 */
export class InconsistentStateError extends StateStoreError {
  static override readonly code = 'ERR_INCONSISTENT_STATE';
  override readonly name = 'InconsistentStateError';

  constructor(
    readonly kind: string,
    readonly id: string,
    readonly reason: StateConflictReason,
    /** What the writer held: its expected version, or its shard epoch. */
    readonly expected: number | null,
    /** What the store held: the stored version (null: none), or the stored epoch. */
    readonly actual: number | null,
    readonly operation: 'write' | 'clear' = 'write',
  ) {
    super(
      reason === 'version'
        ? `${operation} of ${kind}/${id} rejected: expected version ${fmt(expected)}, stored version is ${fmt(actual)} (another activation wrote it; deactivate and reload)`
        : `${operation} of ${kind}/${id} rejected: writer's shard epoch ${fmt(expected)} is older than the stored epoch ${fmt(actual)} (the shard is owned elsewhere)`,
    );
  }
}

/**
 * The store could not be reached or did not answer within `commandTimeoutMs`. For a write or clear
 * the outcome is unknown: it may have been applied; a later write with the old version then fails
 * with {@link InconsistentStateError}, so nothing is silently overwritten.
 */
export class StateUnavailableError extends StateStoreError {
  static override readonly code = 'ERR_STATE_UNAVAILABLE';
  override readonly name = 'StateUnavailableError';

  constructor(
    readonly kind: string,
    readonly id: string,
    readonly operation: 'read' | 'write' | 'clear' | 'open',
    detail: string,
    options?: { cause?: unknown },
  ) {
    const what = operation === 'open' ? 'state store open' : `state ${operation} of ${kind}/${id}`;
    super(`${what} failed: ${detail}`, options);
  }
}

/** Stored state could not be decoded by the kind's codec (a schema change, corrupt bytes). */
export class StateDecodeError extends StateStoreError {
  static override readonly code = 'ERR_STATE_DECODE';
  override readonly name = 'StateDecodeError';

  constructor(
    readonly kind: string,
    readonly id: string,
    readonly codec: string,
    options?: { cause?: unknown },
  ) {
    const why = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super(
      `stored state of ${kind}/${id} cannot be decoded by codec ${codec}${why} (migrate the stored state or change the kind's state codec)`,
      options,
    );
  }
}

/**
 * What the store holds under a grain's key is not what it writes: a version or lost mark that
 * is not an integer (written by something other than Granary, or damaged). Never served and
 * never written over; the other grains are unaffected. Repair or delete the key (`key`).
 */
export class StateCorruptError extends StateStoreError {
  static override readonly code = 'ERR_STATE_CORRUPT';
  override readonly name = 'StateCorruptError';

  constructor(
    readonly kind: string,
    readonly id: string,
    /** The store's key of the grain. */
    readonly key: string,
    detail: string,
  ) {
    super(
      `stored state of ${kind}/${id} is corrupt (key ${key}): ${detail}; repair or delete the key`,
    );
  }
}

/**
 * The state of a grain was read or changed before it was loaded (an `onActivate` override that
 * does not call `super.onActivate(ctx)` first, or a `PersistentState` used before `load()`).
 */
export class StateNotLoadedError extends StateStoreError {
  static override readonly code = 'ERR_STATE_NOT_LOADED';
  override readonly name = 'StateNotLoadedError';
}

/** How lost state was noticed (see docs/durability.md). */
export type StateLossEvidence =
  /** A version older than one acknowledged before: the store went back in time. */
  | 'version'
  /** The store's identity marker is gone or changed: it lost (or is not) the data it had. */
  | 'store-identity'
  /** An earlier detection marked the grain; it stays refused until an operator accepts it. */
  | 'marked';

/**
 * The store holds older state for this grain than was already acknowledged (a Redis restart
 * without persistence, a flush, a failover to a replica that had not received the last
 * writes): serving it would silently undo acknowledged calls. Nothing was written. The grain
 * stays refused until an operator accepts the loss (`RedisStateStore.acceptStateLoss`) or the
 * kind's policy accepts it (`stateLostPolicy`); the activation that got it deactivates.
 */
export class StateLostError extends StateStoreError {
  static override readonly code = 'ERR_STATE_LOST';
  override readonly name = 'StateLostError';

  constructor(
    readonly kind: string,
    readonly id: string,
    /** The newest version known to have been acknowledged (null: unknown, the store lost its identity). */
    readonly seenVersion: number | null,
    /** The version the store holds now (null: nothing). */
    readonly foundVersion: number | null,
    readonly evidence: StateLossEvidence,
  ) {
    super(
      `state of ${kind}/${id} was lost: version ${fmt(seenVersion)} was acknowledged, the store holds ${fmt(foundVersion)} (${EVIDENCE[evidence]}); refused until an operator accepts the loss (acceptStateLoss) or the kind's stateLostPolicy is 'accept'`,
    );
  }
}

const EVIDENCE: Record<StateLossEvidence, string> = {
  version: 'the stored version went back',
  'store-identity': "the store's identity marker is gone or changed",
  marked: 'marked lost by an earlier detection',
};

/**
 * The server cannot give the durability the store was configured with (option `durability`),
 * or the store cannot find out (CONFIG disabled and `serverPersistence` not declared). Thrown
 * by `open()` (so by `Cluster.start` for the stores in `stateStores`) and by every operation of
 * a store that failed its check; `setting` names the Redis setting that falls short.
 */
export class StateDurabilityError extends StateStoreError {
  static override readonly code = 'ERR_STATE_DURABILITY';
  override readonly name = 'StateDurabilityError';

  constructor(
    /** The declared level. */
    readonly durability: string,
    /** The Redis setting (or option) that falls short, e.g. `appendonly`. */
    readonly setting: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The store refused a write or clear outright and wrote nothing: Redis answered with an error
 * that is not a passing state (`OOM` past `maxmemory`, `MISCONF` after a failed save, a script
 * error), or a write refusal that may pass (`READONLY` from a replica, `NOREPLICAS`), unlike
 * StateUnavailableError whose outcome is unknown. The activation deactivates
 * without writing, so the change it held in memory is dropped with the refused call and the next
 * call loads what the store holds; `reply` is the server's answer.
 */
export class StateWriteRefusedError extends StateStoreError {
  static override readonly code = 'ERR_STATE_WRITE_REFUSED';
  override readonly name = 'StateWriteRefusedError';

  constructor(
    readonly kind: string,
    readonly id: string,
    readonly operation: 'write' | 'clear',
    /** What the server answered. */
    readonly reply: string,
    options?: { cause?: unknown },
  ) {
    super(
      `state ${operation} of ${kind}/${id} refused by Redis, nothing written: ${reply} (the activation deactivates; the next call loads the stored state)`,
      options,
    );
  }
}

/**
 * A grain's state is over the store's `maxStateBytes`: a write of it is refused before it is
 * sent (nothing written; the activation deactivates without writing, as after a refusal), and
 * a stored one (put under the grain's key by another program, or by a store with a higher
 * limit) is refused at activation without being read into memory. Other grains are unaffected.
 */
export class StateTooLargeError extends StateStoreError {
  static override readonly code = 'ERR_STATE_TOO_LARGE';
  override readonly name = 'StateTooLargeError';

  constructor(
    readonly kind: string,
    readonly id: string,
    readonly operation: 'read' | 'write',
    /** The state's size in bytes. */
    readonly bytes: number,
    /** The store's maxStateBytes. */
    readonly limit: number,
    /** The store's key of the grain. */
    readonly key: string,
  ) {
    super(
      operation === 'read'
        ? `stored state of ${kind}/${id} is ${bytes} bytes, over ${limit} (maxStateBytes), so it is not read (key ${key}): raise maxStateBytes, or repair or delete the key`
        : `state write of ${kind}/${id} refused, nothing written: ${bytes} bytes is over ${limit} (maxStateBytes)`,
    );
  }
}

registerErrorClasses(
  StateStoreError,
  InconsistentStateError,
  StateUnavailableError,
  StateDecodeError,
  StateCorruptError,
  StateNotLoadedError,
  StateLostError,
  StateDurabilityError,
  StateWriteRefusedError,
  StateTooLargeError,
);

function fmt(n: number | null): string {
  return n === null ? 'none' : String(n);
}

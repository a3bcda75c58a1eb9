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
    readonly operation: 'read' | 'write' | 'clear',
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`state ${operation} of ${kind}/${id} failed: ${detail}`, options);
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
 * The state of a grain was read or changed before it was loaded (an `onActivate` override that
 * does not call `super.onActivate(ctx)` first, or a `PersistentState` used before `load()`).
 */
export class StateNotLoadedError extends StateStoreError {
  static override readonly code = 'ERR_STATE_NOT_LOADED';
  override readonly name = 'StateNotLoadedError';
}

registerErrorClasses(
  StateStoreError,
  InconsistentStateError,
  StateUnavailableError,
  StateDecodeError,
  StateNotLoadedError,
);

function fmt(n: number | null): string {
  return n === null ? 'none' : String(n);
}

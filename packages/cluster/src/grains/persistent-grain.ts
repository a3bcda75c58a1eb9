import { InvalidOptionError } from '@granary/core';
import type { StateCodec } from '../state/codecs/state-codec';
import { jsonStateCodec } from '../state/codecs/json-state-codec';
import { StateNotLoadedError } from '../state/errors';
import { PersistentState, endsWriting } from '../state/persistent-state';
import type { StateStore } from '../state/state-store';
import type { DeactivationReason, Grain, GrainContext } from './grain';
import { servicesOf, stateEpochOf } from './grain-context';

/** How a persistent grain keeps its state. */
export interface PersistentGrainOptions<T> {
  /** Where the state lives (`RedisStateStore`, `MemoryStateStore`, or your own). */
  store: StateStore;
  /** The state of a grain that has none stored yet (also the state after clearState()). */
  initial: () => T;
  /**
   * Encodes the state for the store (`protobufStateCodec(type)` for protobuf types).
   * @default jsonStateCodec()
   */
  codec?: StateCodec<T>;
  /**
   * Save the state when the activation ends (passivated when idle, drained on rebalance or
   * shutdown, fenced), if it changed since the last write. Calls in between may then be
   * acknowledged before their effect is stored: set false and call writeState() where each
   * acknowledged call must be durable.
   * @default false
   */
  persistOnDeactivate?: boolean;
}

/** Defaults of {@link PersistentGrainOptions}. */
export const DEFAULT_PERSISTENT_GRAIN_OPTIONS = {
  persistOnDeactivate: false,
} as const;

/**
 * Base class of a grain whose state survives deactivation, failover and restarts. The state is
 * loaded before the first message (retried while the store is unreachable, within the
 * activation's deadline: the cluster's requestTimeoutMs), and every write is fenced by the
 * stored version and by the epoch of the shard claim the activation was created under (captured
 * once, at activation: a drain must still be able to save under it).
 *
 * A write or clear the store rejects (another activation wrote since: version; a newer owner
 * holds the shard: epoch) throws InconsistentStateError to the caller, and the grain deactivates
 * without writing; the next call activates it again with the winner's state. A store found
 * holding older state than acknowledged throws StateLostError and deactivates the grain the
 * same way; whether it activates again from the older state is the kind's lost-state policy
 * (docs/durability.md). A write the store refuses outright (StateWriteRefusedError: Redis out of
 * memory or unable to persist) deactivates it too, so the refused change is not written later.
 *
 * A subclass that overrides onActivate or onDeactivate must call `super.onActivate(ctx)` first /
 * `super.onDeactivate(reason)` last.
 *
 * @example
 * class Counter extends PersistentGrain<{ n: number }> {
 *   constructor() {
 *     super({ store, initial: () => ({ n: 0 }) });
 *   }
 *   async receive(ctx: GrainContext) {
 *     this.state.n++;
 *     await this.writeState(); // acknowledged only once stored
 *     return this.state.n;
 *   }
 * }
 * const counter = kind('counter', () => new Counter());
 */
export abstract class PersistentGrain<T> implements Grain {
  private readonly stateOptions: PersistentGrainOptions<T>;
  private persistent: PersistentState<T> | undefined = undefined;
  private activationCtx: GrainContext | undefined = undefined;

  protected constructor(options: PersistentGrainOptions<T>) {
    if (options === null || typeof options !== 'object' || options.store === undefined) {
      throw new InvalidOptionError('store', 'PersistentGrain needs a StateStore');
    }
    if (typeof options.initial !== 'function') {
      throw new InvalidOptionError('initial', 'PersistentGrain needs a function');
    }
    this.stateOptions = { ...DEFAULT_PERSISTENT_GRAIN_OPTIONS, ...options };
  }

  /** The grain's state (loaded before the first message). Replace it or change it in place. */
  protected get state(): T {
    return this.ps('state').state;
  }

  protected set state(value: T) {
    this.ps('state').state = value;
  }

  /** The stored version this activation holds (null: nothing stored yet). */
  protected get stateVersion(): number | null {
    return this.ps('stateVersion').version;
  }

  /**
   * Stores the state; resolves with the new version. Rejects with InconsistentStateError (and
   * the grain deactivates) when another activation or a newer shard owner wrote meanwhile, or
   * with StateUnavailableError when the store cannot be reached (the activation stays).
   */
  protected writeState(): Promise<number> {
    return this.ps('writeState()').write().catch(this.conflictEnds);
  }

  /** Removes the stored state; the state is `initial()` again. Rejects like writeState(). */
  protected clearState(): Promise<void> {
    return this.ps('clearState()').clear().catch(this.conflictEnds);
  }

  /** Loads the state under the shard epoch of this activation. */
  async onActivate(ctx: GrainContext): Promise<void> {
    const epoch = ctx.epoch;
    const { store, initial, codec } = this.stateOptions;
    this.activationCtx = ctx;
    const services = servicesOf(ctx);
    if (services !== undefined) store.useLogger?.(services.stateLogger);
    const ps = new PersistentState<T>({
      store,
      kind: ctx.kind,
      id: ctx.identity,
      codec: codec ?? jsonStateCodec<T>(),
      epoch: stateEpochOf(ctx) ?? (() => epoch),
      initial,
      telemetry: services?.state,
    });
    await ps.load(ctx.deadline);
    this.persistent = ps;
  }

  /**
   * With persistOnDeactivate, saves a changed state whatever the reason; never after a conflict.
   * A save under a claim this member lost is fenced: rejected by epoch once the new owner wrote,
   * and before that it makes the new owner's next write fail by version, so it reloads.
   */
  async onDeactivate(_reason: DeactivationReason): Promise<void> {
    const ps = this.persistent;
    if (ps === undefined || ps.conflicted !== undefined) return;
    if (this.stateOptions.persistOnDeactivate) await ps.writeIfChanged();
  }

  abstract receive(ctx: GrainContext): unknown;

  /** Rethrows a failed write or clear; a conflict, lost state or refusal ends the activation. */
  private readonly conflictEnds = (err: unknown): never => {
    if (endsWriting(err)) {
      this.activationCtx?.deactivate();
    }
    throw err;
  };

  private ps(what: string): PersistentState<T> {
    if (this.persistent === undefined) {
      throw new StateNotLoadedError(
        `PersistentGrain: ${what} used before the state was loaded (call super.onActivate(ctx) first in an overriding onActivate)`,
      );
    }
    return this.persistent;
  }
}

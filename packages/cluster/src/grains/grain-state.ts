import { StateNotLoadedError } from '../state/errors';
import type { PersistentState } from '../state/persistent-state';
import type { Grain, GrainContext } from './grain';

/**
 * Where the runtime puts an activation's state handle on the grain object (a registered symbol,
 * so grains built on another installed copy of the package find it too).
 */
export const GRAIN_STATE: unique symbol = Symbol.for('granary.grainState') as never;

/**
 * The state of one activation of a kind that declares `state`: loaded before the first message,
 * written back fenced by version and shard epoch. A write or clear that conflicts (another
 * activation or a newer owner wrote) deactivates the grain; whatever the handle rejects with
 * reaches the caller as that error (InconsistentStateError, StateUnavailableError), not as a
 * GrainError, when grain code lets it through.
 */
export interface GrainState<S> {
  /** The state: replace it, or change it in place. */
  state: S;
  /** The stored version this activation holds (null: nothing stored yet). */
  readonly version: number | null;
  /** Stores the state; resolves with the new version. */
  write(): Promise<number>;
  /** Removes the stored state; the state is `initial()` again. */
  clear(): Promise<void>;
}

/** Errors the runtime's state handed to grain code: they reach the caller as they are. */
const runtimeErrors = new WeakSet<object>();

/** Marks `err` as the runtime's own (see GrainState); returns it. */
export function runtimeStateError<E>(err: E): E {
  if (typeof err === 'object' && err !== null) runtimeErrors.add(err);
  return err;
}

/** True for an error the runtime's state raised (it goes to the caller unwrapped). */
export function isRuntimeStateError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && runtimeErrors.has(err);
}

/** The handle an activation gives its grain and its turns' contexts. */
export class ActivationState<S> implements GrainState<S> {
  constructor(
    private readonly ps: PersistentState<S>,
    /** The write or clear found a conflict: the activation must end. */
    private readonly conflicted: () => void,
  ) {}

  get state(): S {
    return this.ps.state;
  }

  set state(value: S) {
    this.ps.state = value;
  }

  get version(): number | null {
    return this.ps.version;
  }

  write(): Promise<number> {
    return this.ps.write().catch(this.failed);
  }

  clear(): Promise<void> {
    return this.ps.clear().catch(this.failed);
  }

  /** Saves a changed state at deactivation, unless a conflict ended the right to write. */
  async saveIfChanged(): Promise<void> {
    if (this.ps.loaded && this.ps.conflicted === undefined) await this.ps.writeIfChanged();
  }

  private readonly failed = (err: unknown): never => {
    if (this.ps.conflicted !== undefined) this.conflicted();
    throw runtimeStateError(err);
  };
}

/**
 * The state handle the runtime gave `grain` (the `this.state` of base classes). Throws
 * StateNotLoadedError naming what to do when the grain's kind declares no state.
 */
export function stateOf<S>(grain: object, what: string): GrainState<S> {
  const handle = (grain as { [GRAIN_STATE]?: GrainState<S> })[GRAIN_STATE];
  if (handle === undefined) {
    throw new StateNotLoadedError(
      `${what} used on a grain whose kind declares no state: pass kind(name, factory, { state: { store, initial, codec } })`,
    );
  }
  return handle;
}

/**
 * Base class of a grain (not generated) whose kind declares `state`: `this.state`,
 * `this.writeState()`, `this.clearState()` are the runtime's, loaded before the first message.
 * Generated grain classes offer the same members.
 *
 * @example
 * class Counter extends GrainWithState<{ n: number }> {
 *   override async receive() {
 *     this.state.n++;
 *     await this.writeState();
 *     return this.state.n;
 *   }
 * }
 * const counter = kind('counter', () => new Counter(), {
 *   state: { store, initial: () => ({ n: 0 }) },
 * });
 */
export abstract class GrainWithState<S> implements Grain {
  /** The grain's state (loaded before the first message). */
  protected get state(): S {
    return stateOf<S>(this, 'this.state').state;
  }

  protected set state(value: S) {
    stateOf<S>(this, 'this.state').state = value;
  }

  /** The stored version this activation holds (null: nothing stored yet). */
  protected get stateVersion(): number | null {
    return stateOf<S>(this, 'this.stateVersion').version;
  }

  /** Stores the state (fenced); a conflict deactivates the grain and rejects. */
  protected writeState(): Promise<number> {
    return stateOf<S>(this, 'writeState()').write();
  }

  /** Removes the stored state; rejects like writeState(). */
  protected clearState(): Promise<void> {
    return stateOf<S>(this, 'clearState()').clear();
  }

  abstract receive(ctx: GrainContext<S>): unknown;
}

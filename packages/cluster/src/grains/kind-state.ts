import { InvalidOptionError } from '@granary/core';
import type { StateCodec } from '../state/codecs/state-codec';
import { jsonStateCodec } from '../state/codecs/json-state-codec';
import type { StateStore } from '../state/state-store';

/**
 * `T`, but not a place TypeScript infers `T` from (TypeScript 5.4's `NoInfer`, written so that
 * older compilers read it too). Inferred from `initial`, a generated kind's state became the
 * best common type of the grain's declared state and whatever `initial` returned (`{}`).
 */
type NotInferred<T> = [T][T extends unknown ? 0 : never];

/**
 * State declared on a kind (`kind(name, factory, { state: { store, codec, initial } })`): the
 * runtime loads it before the grain's first message and hands it to the grain as `this.state`
 * (generated grains, `GrainWithState`) and `ctx.state`, with `writeState()` / `clearState()`
 * fenced by the shard epoch. Works for any grain, generated or not.
 */
export interface KindStateOptions<S> {
  /** Where the state lives (`RedisStateStore`, `MemoryStateStore`, or your own). Yours to close. */
  store: StateStore;
  /**
   * The state of a grain that has none stored yet (also the state after clearState()). Checked
   * against `S`, never a source of it: `S` comes from the grain class (`PongerGrain<PongState>`)
   * and the codec, so `initial: () => ({})` is refused where the grain reads declared fields.
   */
  initial: () => NotInferred<S>;
  /**
   * Encodes the state for the store: `protobufStateCodec(PingState)` for a generated message
   * type (it keeps the generated representation), `jsonStateCodec()` for plain data.
   * @default jsonStateCodec()
   */
  codec?: StateCodec<S>;
  /**
   * Save the state when the activation ends (idle, drained, shutdown) if it changed since the
   * last write. Calls in between may then be acknowledged before their effect is stored: leave
   * it false and call writeState() where each acknowledged call must be durable.
   * @default false
   */
  persistOnDeactivate?: boolean;
}

/** A kind's resolved state declaration. */
export interface KindState {
  readonly store: StateStore;
  readonly initial: () => unknown;
  readonly codec: StateCodec<unknown>;
  readonly persistOnDeactivate: boolean;
}

/** Checks and resolves `options.state` of kind `name` (undefined: the kind has no state). */
export function kindStateOf(
  name: string,
  state: KindStateOptions<unknown> | undefined,
): KindState | undefined {
  if (state === undefined) return undefined;
  const store = state?.store as Partial<StateStore> | undefined;
  if (typeof store?.read !== 'function' || typeof store.write !== 'function') {
    throw new InvalidOptionError('state.store', `kind '${name}': needs a StateStore`);
  }
  if (typeof state.initial !== 'function') {
    throw new InvalidOptionError('state.initial', `kind '${name}': must be a function`);
  }
  const codec = state.codec ?? jsonStateCodec<unknown>();
  if (typeof codec.encode !== 'function' || typeof codec.decode !== 'function') {
    throw new InvalidOptionError('state.codec', `kind '${name}': needs encode and decode`);
  }
  return {
    store: state.store,
    initial: state.initial,
    codec,
    persistOnDeactivate: state.persistOnDeactivate ?? false,
  };
}

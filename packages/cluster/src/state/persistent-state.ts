import type { StateCodec } from './codecs/state-codec';
import { decodeState } from './codecs/state-codec';
import {
  InconsistentStateError,
  StateDurabilityError,
  StateLostError,
  StateNotLoadedError,
  StateTooLargeError,
  StateUnavailableError,
  StateWriteRefusedError,
} from './errors';
import type { StateRecord, StateStore } from './state-store';
import { MemberFencedError } from '../errors';
import type { StateTelemetry } from '../telemetry/state-telemetry';

/** First pause between load attempts while the store is unreachable: a blip heals quickly. */
const LOAD_RETRY_INITIAL_MS = 50;
/** Longest pause between load attempts, so recovery is noticed within a second. */
const LOAD_RETRY_MAX_MS = 1000;

/** Options of {@link PersistentState}. */
export interface PersistentStateOptions<T> {
  /** Where the state lives. */
  store: StateStore;
  /** Grain kind. */
  kind: string;
  /** Grain identity. */
  id: string;
  /** The kind's state codec (`jsonStateCodec()` or `protobufStateCodec(...)`). */
  codec: StateCodec<T>;
  /**
   * The epoch of the shard claim the activation runs under; read on every write and clear.
   * Capture `ctx.epoch` once in onActivate and return that: during a drain or shutdown the
   * member may already have let go of the claim, and a live lookup would then fence the
   * activation's own final save.
   */
  epoch: () => number;
  /** The state of a grain that has none stored yet (called on load and after clear). */
  initial: () => T;
  /** Spans and metrics of the store operations (the member's; none when absent). */
  telemetry?: StateTelemetry | undefined;
}

/**
 * The state of ONE grain activation: loads it, holds it, writes it back fenced by version and
 * shard epoch. Writes and clears of one instance run one at a time, in call order.
 *
 * How the grain runtime uses it (one instance per activation, never shared or reused):
 * 1. On activation, before the first message: `await ps.load(ctx.deadline)`. It retries while
 *    the store is unavailable until the deadline (epoch ms), then throws StateUnavailableError;
 *    a StateDecodeError is thrown at once. Either way the activation fails and the caller gets
 *    the error; the next call tries a new activation.
 * 2. The grain reads and replaces `ps.state` (in-place mutation of an object is fine too).
 * 3. `writeState()` of the grain → `await ps.write()`; `clearState()` → `await ps.clear()`.
 *    `epoch` must return the epoch of the claim under which this activation was created
 *    (captured at activation: `const epoch = ctx.epoch; ... epoch: () => epoch`).
 * 4. `persistOnDeactivate`: on passivation or drain call `await ps.writeIfChanged()` before the
 *    activation is gone (it writes only when the encoded state differs from the last stored).
 * 5. InconsistentStateError from write/clear/writeIfChanged: reject the caller with it and
 *    deactivate WITHOUT writing (`ps.conflicted` is then true and every later write throws the
 *    same error). The next call activates again and loads the winner's state.
 * 6. StateUnavailableError from a write: reject the caller; the activation may stay, `state`
 *    as the grain left it. If the write did reach Redis, the next write fails with
 *    InconsistentStateError (rule 5); if it never did, the next write stores that state.
 * 7. StateLostError (the store holds older state than this activation saw acknowledged, see
 *    docs/durability.md): as rule 5, reject the caller and deactivate without writing; what the
 *    next activation loads is up to the kind's lost-state policy.
 * 8. StateWriteRefusedError, StateTooLargeError or StateDurabilityError (the store refused the
 *    write and wrote nothing: Redis out of memory, unable to persist, a replica, short of
 *    replicas, a state over the store's maxStateBytes, short of the durability level): as rule 5.
 *    The change held in memory belongs to the refused call; a later write would apply it.
 *
 * @example
 * const ps = new PersistentState({
 *   store, kind: 'counter', id: 'a', codec: jsonStateCodec<{ n: number }>(),
 *   epoch: () => activationEpoch, initial: () => ({ n: 0 }),
 * });
 * await ps.load(Date.now() + 5000);
 * ps.state = { n: ps.state.n + 1 };
 * await ps.write();
 */
export class PersistentState<T> {
  private readonly options: PersistentStateOptions<T>;
  private current: T | undefined;
  private storedVersion: number | null = null;
  private storedBytes: Uint8Array | null = null;
  private isLoaded = false;
  private conflict: WritingEnded | undefined;
  private tail: Promise<unknown> = Promise.resolve();
  /** Writes and clears started and not settled yet; while 0 a new one starts at once. */
  private inFlight = 0;

  constructor(options: PersistentStateOptions<T>) {
    this.options = options;
  }

  /** True once load() succeeded. */
  get loaded(): boolean {
    return this.isLoaded;
  }

  /** The stored version this activation holds (null: nothing stored). */
  get version(): number | null {
    return this.storedVersion;
  }

  /** The conflict (lost state, refusal) that ended this activation's right to write, if any. */
  get conflicted(): WritingEnded | undefined {
    return this.conflict;
  }

  /** The state; throws StateNotLoadedError before load(). */
  get state(): T {
    this.requireLoaded('state');
    return this.current as T;
  }

  set state(value: T) {
    this.requireLoaded('state');
    this.current = value;
  }

  /** Reads the stored state, retrying with backoff while unavailable until `deadline` (epoch ms). */
  async load(deadline: number): Promise<void> {
    const { store, kind, id, codec, initial } = this.options;
    let pause = LOAD_RETRY_INITIAL_MS;
    let failed: unknown; // the last read's failure: the deadline error says why reads failed
    for (;;) {
      try {
        const t = this.options.telemetry;
        const read = (): Promise<StateRecord | null> =>
          withinDeadline(store.read(kind, id), deadline, kind, id, failed);
        const record = await (t === undefined ? read() : t.observe('read', kind, id, read));
        this.current = record ? decodeState(codec, kind, id, record.state) : initial();
        this.storedVersion = record?.version ?? null;
        this.storedBytes = record ? own(record.state) : null;
        this.isLoaded = true;
        return;
      } catch (err) {
        const left = deadline - Date.now();
        if (!StateUnavailableError.is(err) || left <= 0) throw err;
        failed = err;
        await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
        pause = Math.min(pause * 2, LOAD_RETRY_MAX_MS);
      }
    }
  }

  /** Stores the current state; resolves with the new version. */
  write(): Promise<number> {
    return this.serialized(this.writeCurrent);
  }

  private readonly writeCurrent = (): Promise<number> =>
    this.store(this.options.codec.encode(this.state));

  /**
   * Stores the state only if its encoding differs from what was last loaded or written (or, with
   * nothing stored, from `initial()`); resolves with the stored version (null: nothing stored).
   */
  writeIfChanged(): Promise<number | null> {
    return this.serialized(async () => {
      const { codec, initial } = this.options;
      const bytes = codec.encode(this.state);
      const reference = this.storedBytes ?? codec.encode(initial());
      if (Buffer.compare(bytes, reference) === 0) return this.storedVersion;
      return this.store(bytes);
    });
  }

  /** Removes the stored state; the state becomes `initial()` again. */
  clear(): Promise<void> {
    return this.serialized(async () => {
      const { store, kind, id, epoch, initial } = this.options;
      this.requireLoaded('clear()');
      const t = this.options.telemetry;
      const clear = (): Promise<void> =>
        store.clear(kind, id, { expectedVersion: this.storedVersion, epoch: epoch() });
      await this.fenced(t === undefined ? clear : () => t.observe('clear', kind, id, clear));
      this.storedVersion = null;
      this.storedBytes = null;
      this.current = initial();
    });
  }

  /** fenced() inlined: this is every write-through call's path. */
  private async store(bytes: Uint8Array): Promise<number> {
    if (this.conflict) throw this.conflict;
    const { store, kind, id, epoch, telemetry } = this.options;
    try {
      const options = { expectedVersion: this.storedVersion, epoch: epoch() };
      const version = await (telemetry === undefined
        ? store.write(kind, id, bytes, options)
        : telemetry.observe('write', kind, id, () => store.write(kind, id, bytes, options)));
      this.storedVersion = version;
      this.storedBytes = own(bytes);
      return version;
    } catch (err) {
      if (endsWriting(err)) this.conflict = err;
      throw err;
    }
  }

  /**
   * Runs `task` after every write and clear started before it has settled. With none in flight
   * it starts at once rather than a microtask later: same order, one promise and one turn less
   * on every steady-state write.
   */
  private serialized<R>(task: () => Promise<R>): Promise<R> {
    const run = this.inFlight === 0 ? startNow(task) : this.tail.then(task, task);
    this.inFlight++;
    this.tail = run.then(this.settled, this.settled);
    return run;
  }

  private readonly settled = (): void => {
    this.inFlight--;
  };

  private async fenced<R>(operation: () => Promise<R>): Promise<R> {
    if (this.conflict) throw this.conflict;
    try {
      return await operation();
    } catch (err) {
      if (endsWriting(err)) this.conflict = err;
      throw err;
    }
  }

  private requireLoaded(what: string): void {
    if (!this.isLoaded) {
      throw new StateNotLoadedError(
        `${what} of ${this.options.kind}/${this.options.id} used before load() completed`,
      );
    }
  }
}

/** What ends an activation's right to write (see endsWriting). */
export type WritingEnded =
  | InconsistentStateError
  | StateLostError
  | StateWriteRefusedError
  | StateTooLargeError
  | StateDurabilityError
  | MemberFencedError;

/**
 * A conflict, lost state, or a write the store refused or the member's fencing stopped (nothing
 * written): the activation may not write again. After a refusal the state in memory holds a
 * change the caller was told failed; written by the next call it would apply that change after
 * all.
 */
export function endsWriting(err: unknown): err is WritingEnded {
  return (
    InconsistentStateError.is(err) ||
    StateLostError.is(err) ||
    StateWriteRefusedError.is(err) ||
    StateTooLargeError.is(err) ||
    StateDurabilityError.is(err) ||
    MemberFencedError.is(err)
  );
}

/**
 * `bytes`, copied when they view a larger buffer: a codec's output is often a slice of Node's
 * shared 8 KiB Buffer pool (and a read's of a reply chunk), and the copy kept for
 * writeIfChanged must not pin all of it for as long as the activation lives. Small copies live
 * on the JS heap; an exact-size view is kept as it is.
 */
function own(bytes: Uint8Array): Uint8Array {
  return bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
}

/** `task()`, with a synchronous throw turned into a rejection like a chained task's. */
function startNow<R>(task: () => Promise<R>): Promise<R> {
  try {
    return task();
  } catch (err) {
    return Promise.reject(err);
  }
}

/**
 * The read, or StateUnavailableError once `deadline` passes (the read may still finish unseen),
 * naming the failure of the read before it (`failed`, its cause) if there was one.
 */
function withinDeadline<R>(
  read: Promise<R>,
  deadline: number,
  kind: string,
  id: string,
  failed: unknown,
): Promise<R> {
  let timer: NodeJS.Timeout | undefined;
  const before =
    failed === undefined ? '' : `; the read before failed: ${(failed as Error).message}`;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new StateUnavailableError(
            kind,
            id,
            'read',
            `load deadline passed while waiting for the store${before}`,
            failed === undefined ? undefined : { cause: failed },
          ),
        ),
      Math.max(0, deadline - Date.now()),
    );
  });
  read.catch(() => undefined);
  return Promise.race([read, expired]).finally(() => clearTimeout(timer));
}

import { PersistentGrain } from '../../src/grains/persistent-grain';
import { jsonStateCodec } from '../../src/state/codecs/json-state-codec';
import type { StateStore } from '../../src/state/state-store';

/** The counter's stored state. */
export interface Count {
  n: number;
}

/** The codec the counter stores with (tests decode the stored record with it). */
export const countCodec = jsonStateCodec<Count>();

/**
 * Write-through counter for state tests: every message is an increment, answered with the new
 * count only once it is stored; a failed write leaves the state as it was and reaches the caller
 * (a conflict also deactivates the grain, so the next call reloads: PersistentGrain).
 */
export class WriteThroughCounter extends PersistentGrain<Count> {
  constructor(store: StateStore) {
    super({ store, codec: countCodec, initial: () => ({ n: 0 }) });
  }

  async receive(): Promise<number> {
    const before = this.state.n;
    this.state = { n: before + 1 };
    try {
      await this.writeState();
    } catch (err) {
      this.state = { n: before };
      throw err;
    }
    return this.state.n;
  }
}

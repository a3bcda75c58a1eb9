import { expect } from 'chai';
import { InvalidOptionError } from '@granary/core';
import { GrainError } from '../../src/errors';
import type { GrainContext } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { PersistentGrain, type PersistentGrainOptions } from '../../src/grains/persistent-grain';
import { shardOf } from '../../src/placement/shard-of';
import { jsonStateCodec } from '../../src/state/codecs/json-state-codec';
import { MemoryStateStore } from '../../src/state/memory/memory-state-store';
import type { StateRecord, StateStore, StateWriteOptions } from '../../src/state/state-store';
import { MemoryNodes } from '../grains/memory-nodes';

const SHARDS = 4;

interface Count {
  n: number;
}
const codec = jsonStateCodec<Count>();

/** MemoryStateStore that records the fencing arguments of every write and clear. */
class RecordingStore implements StateStore {
  readonly inner = new MemoryStateStore();
  readonly writes: Array<{ op: 'write' | 'clear'; id: string } & StateWriteOptions> = [];

  read(kind: string, id: string): Promise<StateRecord | null> {
    return this.inner.read(kind, id);
  }
  write(kind: string, id: string, state: Uint8Array, o: StateWriteOptions): Promise<number> {
    this.writes.push({ op: 'write', id, ...o });
    return this.inner.write(kind, id, state, o);
  }
  clear(kind: string, id: string, o: StateWriteOptions): Promise<void> {
    this.writes.push({ op: 'clear', id, ...o });
    return this.inner.clear(kind, id, o);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

let store: RecordingStore;

/** 'inc' writes through, 'bump' changes memory only, 'clear' clears, 'bye' deactivates. */
class Counter extends PersistentGrain<Count> {
  constructor(options: Partial<PersistentGrainOptions<Count>> = {}) {
    super({ store, codec, initial: () => ({ n: 0 }), ...options });
  }

  async receive(ctx: GrainContext): Promise<unknown> {
    switch (ctx.message) {
      case 'inc':
        this.state.n++;
        await this.writeState();
        break;
      case 'bump':
        this.state.n++;
        break;
      case 'clear':
        await this.clearState();
        break;
      case 'bye':
        ctx.deactivate();
        break;
    }
    return { n: this.state.n, version: this.stateVersion };
  }
}

/** Touches its state without ever loading it (a subclass that forgot super.onActivate). */
class Forgetful extends Counter {
  override onActivate(): Promise<void> {
    return Promise.resolve();
  }
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('PersistentGrain (in-process member, MemoryStateStore)', function () {
  this.timeout(20_000);
  let nodes: MemoryNodes;

  beforeEach(async () => {
    store = new RecordingStore();
    nodes = new MemoryNodes(() => [
      kind('counter', () => new Counter(), { shardCount: SHARDS }),
      kind('lazy', () => new Counter({ persistOnDeactivate: true }), { shardCount: SHARDS }),
      kind('forgetful', () => new Forgetful(), { shardCount: SHARDS }),
    ]);
    await nodes.add('p1');
  });
  afterEach(async () => {
    await nodes.stopAll();
  });

  const call = (k: string, id: string, m: string): Promise<{ n: number; version: number }> =>
    nodes.nodes[0]!.request(k, id, m, { timeoutMs: 2000 });

  const deactivations = (k: string, id: string): Array<string | undefined> =>
    nodes.log
      .filter((e) => e.type === 'deactivate' && e.kind === k && e.identity === id)
      .map((e) => e.reason);

  it('loads the stored state before the first message', async () => {
    await store.inner.write('counter', 'a', codec.encode({ n: 41 }), {
      expectedVersion: null,
      epoch: 0,
    });
    expect(await call('counter', 'a', 'get')).to.deep.equal({ n: 41, version: 1 });
  });

  it('writeState stores the state under the epoch of the shard claim, with the loaded version', async () => {
    await call('counter', 'a', 'inc');
    await call('counter', 'a', 'inc');
    const epoch = nodes.nodes[0]!.epochOf('counter', shardOf('a', SHARDS));
    expect(epoch).to.be.greaterThan(0);
    expect(store.writes).to.deep.equal([
      { op: 'write', id: 'a', expectedVersion: null, epoch },
      { op: 'write', id: 'a', expectedVersion: 1, epoch },
    ]);
    const record = await store.read('counter', 'a');
    expect(codec.decode(record!.state)).to.deep.equal({ n: 2 });
  });

  it('a write rejected by version reaches the caller as ERR_INCONSISTENT_STATE, the grain deactivates, the next call loads the winner', async () => {
    await call('counter', 'a', 'inc');
    // Another writer (a newer activation elsewhere) stores n = 10 behind this activation's back.
    await store.inner.write('counter', 'a', codec.encode({ n: 10 }), {
      expectedVersion: 1,
      epoch: nodes.nodes[0]!.epochOf('counter', shardOf('a', SHARDS))!,
    });
    const err = await call('counter', 'a', 'inc').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(GrainError);
    expect((err as GrainError).originalCode).to.equal('ERR_INCONSISTENT_STATE');
    expect((err as GrainError).originalName).to.equal('InconsistentStateError');
    await until(() => deactivations('counter', 'a').length === 1, 'the grain deactivates');
    expect(deactivations('counter', 'a')).to.deep.equal(['requested']);
    expect(await call('counter', 'a', 'get')).to.deep.equal({ n: 10, version: 2 });
  });

  it('after a conflict, persistOnDeactivate writes nothing', async () => {
    await call('lazy', 'a', 'inc');
    await store.inner.write('lazy', 'a', codec.encode({ n: 10 }), {
      expectedVersion: 1,
      epoch: nodes.nodes[0]!.epochOf('lazy', shardOf('a', SHARDS))!,
    });
    await call('lazy', 'a', 'bump');
    await call('lazy', 'a', 'inc').catch(() => undefined);
    await until(() => deactivations('lazy', 'a').length === 1, 'the grain deactivates');
    expect(store.writes.map((w) => w.expectedVersion)).to.deep.equal([null, 1]);
    expect(await call('lazy', 'a', 'get')).to.deep.equal({ n: 10, version: 2 });
  });

  it('clearState removes the stored state and starts again from initial()', async () => {
    await call('counter', 'a', 'inc');
    expect(await call('counter', 'a', 'clear')).to.deep.equal({ n: 0, version: null });
    expect(await store.read('counter', 'a')).to.equal(null);
    expect(await call('counter', 'a', 'inc')).to.deep.equal({ n: 1, version: 3 });
  });

  it('persistOnDeactivate saves a changed state when the activation ends; without it nothing is written', async () => {
    await call('lazy', 'a', 'bump');
    await call('lazy', 'a', 'bump');
    await call('counter', 'a', 'bump');
    expect(store.writes).to.deep.equal([]);
    await call('lazy', 'a', 'bye');
    await call('counter', 'a', 'bye');
    await until(
      () => deactivations('lazy', 'a').length + deactivations('counter', 'a').length === 2,
      'both deactivate',
    );
    expect(store.writes.map((w) => `${w.op} ${w.id}`)).to.deep.equal(['write a']);
    expect(await call('lazy', 'a', 'get')).to.deep.equal({ n: 2, version: 1 });
    expect(await call('counter', 'a', 'get')).to.deep.equal({ n: 0, version: null });
  });

  it('persistOnDeactivate skips an unchanged state', async () => {
    await call('lazy', 'a', 'get');
    await call('lazy', 'a', 'bye');
    await until(() => deactivations('lazy', 'a').length === 1, 'the grain deactivates');
    expect(store.writes).to.deep.equal([]);
  });

  it('state used before it was loaded is a StateNotLoadedError naming the fix', async () => {
    const err = await call('forgetful', 'a', 'get').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as GrainError).originalCode).to.equal('ERR_STATE_NOT_LOADED');
    expect((err as GrainError).message).to.match(/super\.onActivate/);
  });

  it('refuses options without a store or an initial state', () => {
    // As a JavaScript caller could: the types forbid an explicit undefined store.
    const noStore = { store: undefined } as unknown as Partial<PersistentGrainOptions<Count>>;
    expect(() => new Counter(noStore)).to.throw(InvalidOptionError, /store/);
    expect(() => new Counter({ initial: 'zero' as unknown as () => Count })).to.throw(
      InvalidOptionError,
      /initial/,
    );
  });
});

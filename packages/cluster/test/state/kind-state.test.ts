import { expect } from 'chai';
import { InvalidOptionError } from '@granary/core';
import type { GrainContext } from '../../src/grains/grain';
import { GrainWithState } from '../../src/grains/grain-state';
import { kind } from '../../src/grains/kind';
import { shardOf } from '../../src/placement/shard-of';
import { jsonStateCodec } from '../../src/state/codecs/json-state-codec';
import { InconsistentStateError, StateUnavailableError } from '../../src/state/errors';
import { MemoryStateStore } from '../../src/state/memory/memory-state-store';
import type { StateRecord, StateStore, StateWriteOptions } from '../../src/state/state-store';
import { MemoryNodes } from '../grains/memory-nodes';

const SHARDS = 4;

interface Count {
  n: number;
  tag: Uint8Array;
}
const codec = jsonStateCodec<Count>();
const initial = (): Count => ({ n: 0, tag: new Uint8Array([1]) });

/** A store that can be made unreachable, and records writes. */
class SwitchableStore implements StateStore {
  readonly inner = new MemoryStateStore();
  down = false;
  writes = 0;
  read(kind: string, id: string): Promise<StateRecord | null> {
    if (this.down) return Promise.reject(new StateUnavailableError(kind, id, 'read', 'down'));
    return this.inner.read(kind, id);
  }
  write(kind: string, id: string, state: Uint8Array, o: StateWriteOptions): Promise<number> {
    this.writes++;
    return this.inner.write(kind, id, state, o);
  }
  clear(kind: string, id: string, o: StateWriteOptions): Promise<void> {
    return this.inner.clear(kind, id, o);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

let store: SwitchableStore;

/** A class grain with declared state: `this.state`, `writeState()`, `clearState()`. */
class Counter extends GrainWithState<Count> {
  seenInActivate: number | undefined;
  onActivate(): void {
    this.seenInActivate = this.state.n; // loaded before onActivate runs
  }
  override async receive(ctx: GrainContext<Count>): Promise<unknown> {
    switch (ctx.message) {
      case 'inc':
        this.state.n++;
        await this.writeState();
        break;
      case 'clear':
        await this.clearState();
        break;
      case 'bump':
        this.state = { ...this.state, n: this.state.n + 1 };
        break;
    }
    return { n: this.state.n, version: this.stateVersion, atActivate: this.seenInActivate };
  }
}

/** A grain that is a plain object and uses only ctx.state. */
const plain = {
  receive: async (ctx: GrainContext<Count>): Promise<unknown> => {
    if (ctx.message === 'inc') {
      ctx.state.n++;
      await ctx.writeState();
    }
    return ctx.state.n;
  },
};

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('state declared on the kind', function () {
  this.timeout(20_000);
  let nodes: MemoryNodes;

  beforeEach(async () => {
    store = new SwitchableStore();
    const state = { store, codec, initial };
    nodes = new MemoryNodes(
      () => [
        kind('counter', () => new Counter(), { shardCount: SHARDS, state }),
        kind('lazy', () => new Counter(), {
          shardCount: SHARDS,
          state: { ...state, persistOnDeactivate: true },
        }),
        kind('plain', () => plain, { shardCount: SHARDS, state }),
        kind('stateless', () => new Counter(), { shardCount: SHARDS }),
      ],
      { requestTimeoutMs: 2000 },
    );
    await nodes.add('s1');
  });
  afterEach(async () => {
    await nodes.stopAll();
  });

  const call = <T = { n: number; version: number | null; atActivate: number }>(
    k: string,
    id: string,
    m: string,
    timeoutMs = 2000,
  ): Promise<T> => nodes.nodes[0]!.request<T>(k, id, m, { timeoutMs });

  const deactivations = (k: string, id: string): Array<string | undefined> =>
    nodes.log
      .filter((e) => e.type === 'deactivate' && e.kind === k && e.identity === id)
      .map((e) => e.reason);

  it('loads the stored state before onActivate and the first message', async () => {
    await store.inner.write('counter', 'a', codec.encode({ n: 41, tag: new Uint8Array() }), {
      expectedVersion: null,
      epoch: 0,
    });
    expect(await call('counter', 'a', 'get')).to.deep.equal({ n: 41, version: 1, atActivate: 41 });
  });

  it('writeState stores under the shard epoch; a new activation reads it back (bytes stay bytes)', async () => {
    await call('counter', 'a', 'inc');
    expect(await call('counter', 'a', 'inc')).to.include({ n: 2, version: 2 });
    const record = await store.read('counter', 'a');
    const stored = codec.decode(record!.state);
    expect(stored.n).to.equal(2);
    expect(stored.tag).to.be.instanceOf(Uint8Array);
    expect(nodes.nodes[0]!.epochOf('counter', shardOf('a', SHARDS))).to.be.greaterThan(0);
  });

  it('ctx.state and ctx.writeState work for a grain that is not a class', async () => {
    expect(await call<number>('plain', 'p', 'inc')).to.equal(1);
    expect(await call<number>('plain', 'p', 'inc')).to.equal(2);
    expect(codec.decode((await store.read('plain', 'p'))!.state).n).to.equal(2);
  });

  it('a conflicting write reaches the caller as InconsistentStateError and deactivates the grain, with no user code', async () => {
    await call('counter', 'a', 'inc');
    await store.inner.write('counter', 'a', codec.encode({ n: 10, tag: new Uint8Array() }), {
      expectedVersion: 1,
      epoch: nodes.nodes[0]!.epochOf('counter', shardOf('a', SHARDS))!,
    });
    const err = await call('counter', 'a', 'inc').catch((e: unknown) => e);
    expect(err).to.be.instanceOf(InconsistentStateError);
    expect(err).to.have.property('code', 'ERR_INCONSISTENT_STATE');
    await until(() => deactivations('counter', 'a').length === 1, 'the grain deactivates');
    expect(deactivations('counter', 'a')).to.deep.equal(['state-conflict']);
    expect(await call('counter', 'a', 'get')).to.include({ n: 10, version: 2 });
  });

  it('clearState starts again from initial()', async () => {
    await call('counter', 'a', 'inc');
    expect(await call('counter', 'a', 'clear')).to.include({ n: 0, version: null });
    expect(await store.read('counter', 'a')).to.equal(null);
  });

  it('persistOnDeactivate saves a changed state when the activation ends', async () => {
    await call('lazy', 'a', 'bump');
    expect(store.writes).to.equal(0);
    await nodes.stopAll();
    expect(codec.decode((await store.inner.read('lazy', 'a'))!.state).n).to.equal(1);
  });

  it('a store outage during activation reaches the caller as StateUnavailableError within its deadline', async () => {
    store.down = true;
    const started = Date.now();
    const err = await call('counter', 'down', 'get', 800).catch((e: unknown) => e);
    const took = Date.now() - started;
    expect(err).to.be.instanceOf(StateUnavailableError);
    expect(took).to.be.lessThan(800);
    store.down = false;
    await until(() => deactivations('counter', 'down').length === 1, 'the failed activation ends');
    expect(await call('counter', 'down', 'get')).to.include({ n: 0 });
  });

  it('this.state on a kind without declared state is a StateNotLoadedError naming the option', async () => {
    const err = await call('stateless', 'x', 'get').catch((e: unknown) => e);
    expect(err).to.have.property('originalCode', 'ERR_STATE_NOT_LOADED');
    expect((err as Error).message).to.contain('state: { store, initial, codec }');
  });

  it('refuses a state declaration without a store or initial, naming the option', () => {
    expect(() => kind('k', () => plain, { state: { initial } as never }))
      .to.throw(InvalidOptionError)
      .with.property('option', 'state.store');
    expect(() => kind('k', () => plain, { state: { store } as never }))
      .to.throw(InvalidOptionError)
      .with.property('option', 'state.initial');
  });
});

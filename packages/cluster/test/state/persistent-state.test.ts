import { expect } from 'chai';
import { join } from 'node:path';
import { loadModuleCopy } from '@granary/testkit';
import { jsonStateCodec } from '../../src/state/codecs/json-state-codec';
import {
  InconsistentStateError,
  StateNotLoadedError,
  StateDecodeError,
  StateUnavailableError,
} from '../../src/state/errors';
import { MemoryStateStore } from '../../src/state/memory/memory-state-store';
import { PersistentState } from '../../src/state/persistent-state';
import type { StateStore, StateWriteOptions } from '../../src/state/state-store';

interface Counter {
  n: number;
}

const codec = jsonStateCodec<Counter>({
  validate: (v) => {
    if (typeof (v as Partial<Counter>).n !== 'number') throw new Error('n is not a number');
    return v as Counter;
  },
});

/** A MemoryStateStore that records the options of every write and clear. */
class RecordingStore extends MemoryStateStore {
  readonly calls: Array<{ op: string } & StateWriteOptions> = [];
  override write(
    kind: string,
    id: string,
    state: Uint8Array,
    o: StateWriteOptions,
  ): Promise<number> {
    this.calls.push({ op: 'write', ...o });
    return super.write(kind, id, state, o);
  }
  override clear(kind: string, id: string, o: StateWriteOptions): Promise<void> {
    this.calls.push({ op: 'clear', ...o });
    return super.clear(kind, id, o);
  }
}

function activation(store: StateStore, epoch: () => number = () => 1): PersistentState<Counter> {
  return new PersistentState({
    store,
    kind: 'counter',
    id: 'c1',
    codec,
    epoch,
    initial: () => ({ n: 0 }),
  });
}

const soon = (): number => Date.now() + 5000;

describe('PersistentState', () => {
  describe('load', () => {
    it('starts from initial() with no version when nothing is stored', async () => {
      const ps = activation(new MemoryStateStore());
      await ps.load(soon());
      expect({ state: ps.state, version: ps.version, loaded: ps.loaded }).to.deep.equal({
        state: { n: 0 },
        version: null,
        loaded: true,
      });
    });

    it('loads the stored state and its version', async () => {
      const store = new MemoryStateStore();
      await store.write('counter', 'c1', codec.encode({ n: 5 }), {
        expectedVersion: null,
        epoch: 1,
      });
      const ps = activation(store);
      await ps.load(soon());
      expect({ state: ps.state, version: ps.version }).to.deep.equal({
        state: { n: 5 },
        version: 1,
      });
    });

    it('throws StateDecodeError at once for state it cannot decode, without retrying', async () => {
      const store = new MemoryStateStore();
      let reads = 0;
      const read = store.read.bind(store);
      store.read = (k, i) => (reads++, read(k, i));
      await store.write('counter', 'c1', jsonStateCodec().encode({ n: 'x' }), {
        expectedVersion: null,
        epoch: 1,
      });
      const err = await activation(store)
        .load(soon())
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(StateDecodeError);
      expect((err as Error).message).to.contain('counter/c1');
      expect(reads).to.equal(1);
    });

    it('retries reads that fail with StateUnavailableError until one succeeds', async () => {
      const store = new MemoryStateStore();
      let failures = 2;
      const read = store.read.bind(store);
      store.read = async (k, i) => {
        if (failures-- > 0) throw new StateUnavailableError(k, i, 'read', 'down');
        return read(k, i);
      };
      const ps = activation(store);
      await ps.load(soon());
      expect(failures).to.equal(-1);
      expect(ps.loaded).to.equal(true);
    });

    it('at the deadline, during a read that hangs, says why the reads before it failed', async () => {
      const store = new MemoryStateStore();
      let reads = 0;
      store.read = (k, i) =>
        ++reads === 1
          ? Promise.reject(new StateUnavailableError(k, i, 'read', 'Redis not connected'))
          : new Promise(() => undefined); // a command queued while the client reconnects
      const err = await activation(store)
        .load(Date.now() + 300)
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(StateUnavailableError);
      expect((err as Error).message)
        .to.include('deadline')
        .and.include('Redis not connected');
      expect((err as Error).cause).to.be.instanceOf(StateUnavailableError);
    });

    it('retries too when the store is built on another copy of the package (is(), not instanceof)', async () => {
      const other = loadModuleCopy<typeof import('../../src/index')>(
        join(__dirname, '../../src/index.js'),
      );
      const store = new MemoryStateStore();
      let failures = 2;
      const read = store.read.bind(store);
      store.read = async (k, i) => {
        if (failures-- > 0) throw new other.StateUnavailableError(k, i, 'read', 'down');
        return read(k, i);
      };
      const ps = activation(store);
      await ps.load(soon());
      expect(failures).to.equal(-1);
      expect(ps.loaded).to.equal(true);
    });

    it('refuses state access before load()', () => {
      expect(() => activation(new MemoryStateStore()).state).to.throw(
        StateNotLoadedError,
        /before load/,
      );
    });
  });

  describe('write', () => {
    it('passes the loaded version and the current shard epoch on every write', async () => {
      const store = new RecordingStore();
      let epoch = 7;
      const ps = activation(store, () => epoch);
      await ps.load(soon());
      ps.state = { n: 1 };
      expect(await ps.write()).to.equal(1);
      epoch = 9;
      ps.state.n = 2;
      expect(await ps.write()).to.equal(2);
      expect(store.calls).to.deep.equal([
        { op: 'write', expectedVersion: null, epoch: 7 },
        { op: 'write', expectedVersion: 1, epoch: 9 },
      ]);
      expect(codec.decode((await store.read('counter', 'c1'))!.state)).to.deep.equal({ n: 2 });
    });

    it('runs overlapping writes of one activation one after another, without self-conflict', async () => {
      const ps = activation(new MemoryStateStore());
      await ps.load(soon());
      const versions = await Promise.all(
        Array.from({ length: 10 }, (_, i) => {
          ps.state = { n: i };
          return ps.write();
        }),
      );
      expect(versions).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    });

    it('after a version conflict keeps rejecting without calling the store; a new activation loads the winner', async () => {
      const store = new RecordingStore();
      const a = activation(store);
      const b = activation(store);
      await a.load(soon());
      await b.load(soon());
      b.state = { n: 10 };
      await b.write();
      a.state = { n: 1 };
      const err = await a.write().catch((e: unknown) => e);
      expect(err).to.be.instanceOf(InconsistentStateError);
      expect(a.conflicted).to.equal(err);
      const callsBefore = store.calls.length;
      expect(await a.write().catch((e: unknown) => e)).to.equal(err);
      expect(await a.clear().catch((e: unknown) => e)).to.equal(err);
      expect(store.calls.length).to.equal(callsBefore);
      const next = activation(store);
      await next.load(soon());
      expect(next.state).to.deep.equal({ n: 10 });
    });

    it('rejects the write of an activation whose shard epoch is older than the new owner', async () => {
      const store = new MemoryStateStore();
      const old = activation(store, () => 3);
      await old.load(soon());
      const owner = activation(store, () => 4);
      await owner.load(soon());
      owner.state = { n: 100 };
      await owner.write();
      old.state = { n: 1 };
      const err = await old.write().catch((e: unknown) => e);
      expect(err).to.be.instanceOf(InconsistentStateError);
      expect((err as InconsistentStateError).reason).to.equal('epoch');
      expect(codec.decode((await store.read('counter', 'c1'))!.state)).to.deep.equal({ n: 100 });
    });
  });

  describe('writeIfChanged', () => {
    it('writes only when the encoded state differs from the stored one', async () => {
      const store = new RecordingStore();
      const ps = activation(store);
      await ps.load(soon());
      expect(await ps.writeIfChanged()).to.equal(null);
      ps.state.n = 1;
      expect(await ps.writeIfChanged()).to.equal(1);
      expect(await ps.writeIfChanged()).to.equal(1);
      ps.state = { n: 1 };
      expect(await ps.writeIfChanged()).to.equal(1);
      expect(store.calls.map((c) => c.op)).to.deep.equal(['write']);
    });
  });

  describe('clear', () => {
    it('removes the stored state and goes back to initial(); a later write recreates it', async () => {
      const store = new RecordingStore();
      const ps = activation(store, () => 2);
      await ps.load(soon());
      ps.state = { n: 3 };
      await ps.write();
      await ps.clear();
      expect({ state: ps.state, version: ps.version }).to.deep.equal({
        state: { n: 0 },
        version: null,
      });
      expect(await store.read('counter', 'c1')).to.equal(null);
      ps.state = { n: 4 };
      await ps.write();
      expect(store.calls).to.deep.equal([
        { op: 'write', expectedVersion: null, epoch: 2 },
        { op: 'clear', expectedVersion: 1, epoch: 2 },
        { op: 'write', expectedVersion: null, epoch: 2 },
      ]);
    });
  });
});

import { startRedis, type RedisHandle } from '@granary/testkit';
import { InvalidOptionError } from '@granary/core';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import {
  InconsistentStateError,
  StateStoreError,
  StateUnavailableError,
} from '../../src/state/errors';
import { RedisStateStore } from '../../src/state/redis/redis-state-store';
import type { StateStore, StateWriteOptions } from '../../src/state/state-store';
import { describeStateStoreConformance } from './state-store-conformance';

/**
 * Every write goes out together with a write of a scratch grain issued in the same turn, so it
 * always travels in a batch (WRITE_MANY_SCRIPT) instead of alone: the StateStore contract must
 * hold on that path too.
 */
let scratch = 0;
function alwaysBatched(store: RedisStateStore): StateStore {
  return {
    read: (kind, id) => store.read(kind, id),
    clear: (kind, id, options) => store.clear(kind, id, options),
    close: () => store.close(),
    write: async (kind, id, state, options) => {
      const companion = store.write('scratch', `s${++scratch}`, Uint8Array.of(0), {
        expectedVersion: null,
        epoch: 0,
      });
      const [result] = await Promise.allSettled([store.write(kind, id, state, options), companion]);
      if (result.status === 'rejected') throw result.reason;
      return result.value;
    },
  };
}

describe('RedisStateStore write batching', () => {
  let redis: RedisHandle;
  let admin: Redis;
  const open: RedisStateStore[] = [];

  const newStore = (options: ConstructorParameters<typeof RedisStateStore>[0] = {}) => {
    const store = new RedisStateStore({ url: redis.url, ...options });
    open.push(store);
    return store;
  };

  /** Script calls Redis ran since the last resetStats() (EVAL loads the script on a socket). */
  const scriptCalls = async (): Promise<number> => {
    const info = await admin.info('commandstats');
    let calls = 0;
    for (const m of info.matchAll(/^cmdstat_(?:eval|evalsha):calls=(\d+)/gm)) calls += Number(m[1]);
    return calls;
  };
  const resetStats = async (): Promise<void> => {
    await admin.config('RESETSTAT');
  };

  const first = (epoch = 1): StateWriteOptions => ({ expectedVersion: null, epoch });

  before(async () => {
    redis = await startRedis();
    admin = new Redis(redis.url);
  });

  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });

  after(async () => {
    admin?.disconnect();
    await redis?.stop();
  });

  describe('conformance with every write in a batch', () => {
    describeStateStoreConformance(async () => ({
      store: alwaysBatched(newStore()),
      other: alwaysBatched(newStore()),
      detectsLoss: true,
    }));
  });

  it('sends the writes of many grains issued in one turn as one script call', async () => {
    const store = newStore({ keyPrefix: 'one-call:' });
    await store.write('k', 'warm', Uint8Array.of(1), first()); // connected, script loaded
    await resetStats();
    const versions = await Promise.all(
      Array.from({ length: 100 }, (_, i) => store.write('k', `g${i}`, Uint8Array.of(i), first())),
    );
    expect(versions).to.deep.equal(new Array(100).fill(1));
    expect(await scriptCalls()).to.equal(1);
    for (const i of [0, 42, 99]) {
      const record = await store.read('k', `g${i}`);
      expect(record && Array.from(record.state)).to.deep.equal([i]);
    }
  });

  it('splits a turn with more writes than writeBatchSize into several calls, all applied', async () => {
    const store = newStore({ keyPrefix: 'split:', writeBatchSize: 16 });
    await store.write('k', 'warm', Uint8Array.of(1), first());
    await resetStats();
    await Promise.all(
      Array.from({ length: 40 }, (_, i) => store.write('k', `g${i}`, Uint8Array.of(i), first())),
    );
    expect(await scriptCalls()).to.equal(3); // 16 + 16 + 8
    expect((await store.read('k', 'g39'))?.version).to.equal(1);
  });

  it('starts a new call before the state in one would pass 1 MiB', async () => {
    const store = newStore({ keyPrefix: 'bytes:' });
    await store.write('k', 'warm', Uint8Array.of(1), first());
    await resetStats();
    const big = (fill: number): Uint8Array => new Uint8Array(600 * 1024).fill(fill);
    await Promise.all([
      store.write('k', 'big1', big(1), first()),
      store.write('k', 'big2', big(2), first()),
      store.write('k', 'big3', big(3), first()),
      ...Array.from({ length: 5 }, (_, i) => store.write('k', `s${i}`, Uint8Array.of(i), first())),
    ]);
    expect(await scriptCalls()).to.equal(3); // big1 | big2 | big3 + the small ones
    for (const n of [1, 2, 3]) {
      const record = await store.read('k', `big${n}`);
      expect([record!.state.length, record!.state[0]]).to.deep.equal([600 * 1024, n]);
    }
    expect((await store.read('k', 's4'))?.version).to.equal(1);
  });

  it('sends every write alone with writeBatchSize 1', async () => {
    const store = newStore({ keyPrefix: 'alone:', writeBatchSize: 1 });
    await store.write('k', 'warm', Uint8Array.of(1), first());
    await resetStats();
    await Promise.all(
      Array.from({ length: 10 }, (_, i) => store.write('k', `g${i}`, Uint8Array.of(i), first())),
    );
    expect(await scriptCalls()).to.equal(10);
  });

  it('rejects only the conflicting writes of a batch, with their own reason and values', async () => {
    const store = newStore({ keyPrefix: 'mixed:' });
    await store.write('k', 'stale', Uint8Array.of(1), first(5));
    await store.write('k', 'stale', Uint8Array.of(1), { expectedVersion: 1, epoch: 5 });
    await store.write('k', 'fenced', Uint8Array.of(1), first(9));
    const results = await Promise.allSettled([
      store.write('k', 'fresh', Uint8Array.of(2), first(5)),
      store.write('k', 'stale', Uint8Array.of(2), { expectedVersion: 1, epoch: 5 }),
      store.write('k', 'fenced', Uint8Array.of(2), { expectedVersion: 1, epoch: 8 }),
      store.write('k', 'stale', Uint8Array.of(3), { expectedVersion: 2, epoch: 5 }),
    ]);
    expect(results.map((r) => r.status)).to.deep.equal([
      'fulfilled',
      'rejected',
      'rejected',
      'fulfilled',
    ]);
    const version = (results[1] as PromiseRejectedResult).reason as InconsistentStateError;
    expect(version).to.be.instanceOf(InconsistentStateError);
    expect([version.reason, version.expected, version.actual]).to.deep.equal(['version', 1, 2]);
    const epoch = (results[2] as PromiseRejectedResult).reason as InconsistentStateError;
    expect([epoch.reason, epoch.expected, epoch.actual]).to.deep.equal(['epoch', 8, 9]);
    expect((results[3] as PromiseFulfilledResult<number>).value).to.equal(3);
    expect(Array.from((await store.read('k', 'fenced'))!.state)).to.deep.equal([1]);
    expect(Array.from((await store.read('k', 'stale'))!.state)).to.deep.equal([3]);
  });

  it('applies writes to one grain within a batch in the order issued', async () => {
    const store = newStore({ keyPrefix: 'order:' });
    const versions = await Promise.all([
      store.write('k', 'a', Uint8Array.of(1), first()),
      store.write('k', 'a', Uint8Array.of(2), { expectedVersion: 1, epoch: 1 }),
      store.write('k', 'a', Uint8Array.of(3), { expectedVersion: 2, epoch: 1 }),
    ]);
    expect(versions).to.deep.equal([1, 2, 3]);
    expect(Array.from((await store.read('k', 'a'))!.state)).to.deep.equal([3]);
  });

  it('fails only the write whose key Redis refuses; the others in the batch are stored', async () => {
    const store = newStore({ keyPrefix: 'foreign:' });
    await admin.set('foreign:{k/x}', 'not a hash');
    const [ok1, bad, ok2] = await Promise.allSettled([
      store.write('k', 'a', Uint8Array.of(1), first()),
      store.write('k', 'x', Uint8Array.of(1), first()),
      store.write('k', 'b', Uint8Array.of(2), first()),
    ]);
    expect(ok1.status).to.equal('fulfilled');
    expect(ok2.status).to.equal('fulfilled');
    const err = (bad as PromiseRejectedResult).reason as Error;
    expect(err).to.be.instanceOf(StateStoreError).and.not.to.be.instanceOf(StateUnavailableError);
    expect(err.message).to.contain('k/x').and.to.contain('WRONGTYPE');
    expect(Array.from((await store.read('k', 'b'))!.state)).to.deep.equal([2]);
    expect(await admin.get('foreign:{k/x}')).to.equal('not a hash');
  });

  it('keeps binary and empty states, large epochs and versions exact inside a batch', async () => {
    const store = newStore({ keyPrefix: 'exact:' });
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    const epoch = Number.MAX_SAFE_INTEGER;
    await Promise.all([
      store.write('k', 'all', all, first(epoch)),
      store.write('k', 'empty', new Uint8Array(0), first(epoch)),
      store.write('k', 'big', new Uint8Array(1 << 20).fill(7), first(epoch)),
    ]);
    expect(Array.from((await store.read('k', 'all'))!.state)).to.deep.equal(Array.from(all));
    expect((await store.read('k', 'empty'))!.state.length).to.equal(0);
    expect((await store.read('k', 'big'))!.state.length).to.equal(1 << 20);
    expect(await admin.hget('exact:{k/all}', 'e')).to.equal(String(epoch));
    await admin.hset('exact:{k/all}', 'v', String(2 ** 52));
    const [version] = await Promise.all([
      store.write('k', 'all', all, { expectedVersion: 2 ** 52, epoch }),
      store.write('k', 'other', all, first(epoch)),
    ]);
    expect(version).to.equal(2 ** 52 + 1);
  });

  it('fails every write of a batch that Redis never answers with StateUnavailableError', async () => {
    const silent = await startRedis();
    try {
      const store = new RedisStateStore({ url: silent.url, commandTimeoutMs: 300 });
      open.push(store);
      await store.write('k', 'warm', Uint8Array.of(1), first());
      silent.pause();
      const results = await Promise.allSettled(
        Array.from({ length: 5 }, (_, i) => store.write('k', `g${i}`, Uint8Array.of(i), first())),
      );
      for (const r of results) {
        const reason = (r as PromiseRejectedResult).reason as Error;
        expect(reason).to.be.instanceOf(StateUnavailableError);
        expect(reason.message).to.contain('outcome is unknown');
      }
    } finally {
      silent.resume();
      await silent.stop();
    }
  });

  it("batches on a client passed in, also when it has ioredis' enableAutoPipelining on", async () => {
    const client = new Redis(redis.url, { enableAutoPipelining: true });
    try {
      const store = new RedisStateStore({ client, keyPrefix: 'auto:' });
      await store.write('k', 'warm', Uint8Array.of(1), first());
      await resetStats();
      const versions = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          store.write('k', `g${i}`, Uint8Array.of(i), { expectedVersion: null, epoch: i }),
        ),
      );
      expect(versions).to.deep.equal(new Array(50).fill(1));
      expect(await scriptCalls()).to.equal(1);
      expect(await admin.hgetall('auto:{k/g49}')).to.deep.equal({
        s: String.fromCharCode(49),
        v: '1',
        e: '49',
      });
    } finally {
      client.disconnect();
    }
  });

  it('rejects a writeBatchSize that is not a positive integer, naming the option', () => {
    for (const writeBatchSize of [0, -1, 1.5, Number.NaN]) {
      expect(() => new RedisStateStore({ url: redis.url, writeBatchSize })).to.throw(
        InvalidOptionError,
        /writeBatchSize/,
      );
    }
  });
});

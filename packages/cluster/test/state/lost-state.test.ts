import { startRedis, type RedisHandle } from '@granary/testkit';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { ClusterLogger } from '../../src/internal/logger';
import { StateLostError } from '../../src/state/errors';
import { RedisStateStore } from '../../src/state/redis/redis-state-store';
import type { RedisStateStoreOptions } from '../../src/state/redis/redis-state-store-options';

const bytes = (n: number): Uint8Array => Uint8Array.of(n);

async function lostError(promise: Promise<unknown>): Promise<StateLostError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).to.be.instanceOf(StateLostError);
  expect((err as StateLostError).code).to.equal('ERR_STATE_LOST');
  return err as StateLostError;
}

const facts = (e: StateLostError): unknown[] => [e.seenVersion, e.foundVersion, e.evidence];

describe('RedisStateStore lost-state detection (real Redis)', () => {
  let redis: RedisHandle;
  let admin: Redis;
  const stores: RedisStateStore[] = [];
  const errors: Array<{ obj: Record<string, unknown>; msg: string | undefined }> = [];
  const logger: ClusterLogger = {
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: (obj, msg) => errors.push({ obj: obj as Record<string, unknown>, msg }),
    child: () => logger,
  };

  /** Stores on one Redis, as members of one cluster (each its own connection and memory). */
  const newStore = (options: RedisStateStoreOptions = {}): RedisStateStore => {
    const store = new RedisStateStore({ url: redis.url, logger, ...options });
    stores.push(store);
    return store;
  };

  beforeEach(async () => {
    redis = await startRedis();
    admin = new Redis(redis.url);
    errors.length = 0;
  });

  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    admin.disconnect();
    await redis.stop();
  });

  /** Writes `count` versions of k/id; resolves with the last version. */
  async function writeVersions(store: RedisStateStore, id: string, count: number): Promise<number> {
    let version: number | null = null;
    for (let i = 1; i <= count; i++) {
      version = await store.write('k', id, bytes(i), { expectedVersion: version, epoch: 1 });
    }
    return version!;
  }

  describe('a store that went back (a failover to a replica that missed writes)', () => {
    it('a writer expecting a newer version gets StateLostError; the grain is marked, listed, and refused until accepted', async () => {
      const store = newStore();
      const v3 = await writeVersions(store, 'a', 3);
      // The replica had only version 1.
      await admin.hset(store.keyOf('k', 'a'), 'v', '1', 's', Buffer.from([1]));
      const err = await lostError(
        store.write('k', 'a', bytes(4), { expectedVersion: v3, epoch: 1 }),
      );
      expect(facts(err)).to.deep.equal([3, 1, 'version']);
      expect(err.message).to.contain('k/a').and.contain('acceptStateLoss');

      const other = newStore(); // another member, which never saw version 3
      expect(facts(await lostError(other.read('k', 'a')))).to.deep.equal([3, 1, 'marked']);
      expect((await other.stateLoss()).grains).to.deep.equal([
        { kind: 'k', id: 'a', seenVersion: 3, foundVersion: 1 },
      ]);

      expect(await other.acceptStateLoss({ kind: 'k', id: 'a' })).to.deep.equal({
        store: false,
        grains: 1,
      });
      const record = await other.read('k', 'a');
      // The older state, at a version past every acknowledged one: nobody flags it again.
      expect([record?.version, Array.from(record!.state)]).to.deep.equal([4, [1]]);
      expect((await store.read('k', 'a'))?.version).to.equal(4);
      expect(await store.write('k', 'a', bytes(5), { expectedVersion: 4, epoch: 1 })).to.equal(5);
      expect((await other.stateLoss()).grains).to.deep.equal([]);
    });

    it('a read older than a version this store saw acknowledged is refused (a grain activated again after a failover)', async () => {
      const store = newStore();
      await writeVersions(store, 'b', 3);
      await admin.hset(store.keyOf('k', 'b'), 'v', '2');
      expect(facts(await lostError(store.read('k', 'b')))).to.deep.equal([3, 2, 'version']);
      // Even with the mark gone too (the whole key lost), the remembered version catches it.
      await admin.del(store.keyOf('k', 'b'));
      expect(facts(await lostError(store.read('k', 'b')))).to.deep.equal([3, null, 'version']);
      expect(facts(await lostError(store.read('k', 'b')))).to.deep.equal([3, null, 'marked']);
    });

    it('logs each lost grain once at error level and counts every refusal', async () => {
      const store = newStore();
      await writeVersions(store, 'c', 2);
      await admin.del(store.keyOf('k', 'c'));
      await lostError(store.read('k', 'c'));
      await lostError(store.read('k', 'c'));
      await lostError(store.write('k', 'c', bytes(9), { expectedVersion: 2, epoch: 1 }));
      expect(errors.map((e) => [e.obj.kind, e.obj.id, e.obj.seenVersion])).to.deep.equal([
        ['k', 'c', 2],
      ]);
      expect(errors[0]!.msg).to.contain('refused until an operator');
      expect(store.lossCounts).to.deep.include({
        lostGrains: 1,
        refusedCalls: 3,
        acceptedGrains: 0,
      });
    });

    it("a kind with stateLostPolicy 'accept' carries on from the older state (the detecting call still fails)", async () => {
      const store = newStore({ stateLostPolicy: { k: 'accept' } });
      await writeVersions(store, 'd', 3);
      await admin.hset(store.keyOf('k', 'd'), 'v', '1', 's', Buffer.from([1]));
      await lostError(store.write('k', 'd', bytes(4), { expectedVersion: 3, epoch: 1 }));
      let record = await store.read('k', 'd');
      for (let i = 0; record?.version !== 4 && i < 50; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        record = await store.read('k', 'd');
      }
      expect([record?.version, Array.from(record!.state)]).to.deep.equal([4, [1]]);
      expect(store.lossCounts.acceptedGrains).to.equal(1);
      expect(errors[0]!.msg).to.contain("'accept'");
    });
  });

  describe('a store that lost everything (restart without persistence, flush)', () => {
    it('refuses every grain without state, on every member, until an operator accepts: per kind, then all', async () => {
      const first = newStore();
      await writeVersions(first, 'e', 2);
      await first.write('j', 'x', bytes(1), { expectedVersion: null, epoch: 1 });
      await admin.flushall();

      // A grain the member saw: refused with its versions. A grain it never saw: refused too,
      // since the store cannot tell a new grain from a lost one.
      expect(facts(await lostError(first.read('k', 'e')))).to.deep.equal([2, null, 'version']);
      expect(facts(await lostError(first.read('k', 'never')))).to.deep.equal([
        null,
        null,
        'store-identity',
      ]);
      const later = newStore(); // a member started after the loss
      expect(facts(await lostError(later.read('j', 'x')))).to.deep.equal([
        null,
        null,
        'store-identity',
      ]);
      const loss = (await later.stateLoss()).store;
      expect(loss?.previousId).to.be.a('string').with.length.above(0);
      expect(first.lossCounts.lostStores).to.equal(1);

      expect((await later.acceptStateLoss({ kind: 'j' })).store).to.equal(true);
      expect(await later.read('j', 'x')).to.equal(null);
      await lostError(later.read('k', 'never'));

      expect((await later.acceptStateLoss()).store).to.equal(true);
      expect(await later.read('k', 'never')).to.equal(null);
      expect((await later.stateLoss()).store).to.equal(null);
      // The retired identity is not a new loss for a member that knew it.
      expect(await first.read('j', 'other')).to.equal(null);
      expect(first.lossCounts.lostStores).to.equal(1);
    });

    it('detects the loss on reconnect after a restart without persistence', async () => {
      await redis.stop();
      redis = await startRedis({ appendonly: false });
      admin.disconnect();
      admin = new Redis(redis.url);
      const store = newStore({ durability: 'none' });
      await writeVersions(store, 'f', 1);
      await redis.kill({ keepData: true });
      await redis.restart();
      for (let i = 0; store.lossCounts.lostStores === 0 && i < 100; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(store.lossCounts.lostStores).to.equal(1);
      expect(errors.some((e) => e.msg?.includes('state store lost its data'))).to.equal(true);
      await lostError(store.read('k', 'unseen'));
    });
  });
});

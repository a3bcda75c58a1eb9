import { startRedis, type RedisHandle } from '@granary/testkit';
import { InvalidOptionError } from '@granary/core';
import { expect } from 'chai';
import { Redis, ReplyError } from 'ioredis';
import { StateCorruptError, StateStoreError, StateUnavailableError } from '../../src/state/errors';
import { RedisStateStore } from '../../src/state/redis/redis-state-store';
import type { RedisStateStoreOptions } from '../../src/state/redis/redis-state-store-options';
import { describeStateStoreConformance } from './state-store-conformance';

describe('RedisStateStore', () => {
  let redis: RedisHandle;
  const open: RedisStateStore[] = [];
  const clients: Redis[] = [];

  const newStore = (
    options: ConstructorParameters<typeof RedisStateStore>[0] = {},
  ): RedisStateStore => {
    const store = new RedisStateStore(options.client ? options : { url: redis.url, ...options });
    open.push(store);
    return store;
  };
  const newClient = (): Redis => {
    const client = new Redis(redis.url);
    clients.push(client);
    return client;
  };

  before(async () => {
    redis = await startRedis();
  });

  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
    clients.splice(0).forEach((c) => c.disconnect());
  });

  after(async () => {
    await redis?.stop();
  });

  describeStateStoreConformance(async () => ({
    store: newStore(),
    other: newStore(),
    detectsLoss: true,
  }));

  describe('keys', () => {
    it('stores one hash per grain under the prefix, the grain inside a hash tag', async () => {
      const store = newStore({ keyPrefix: 'app1:' });
      await store.write('cart', 'u/1', Uint8Array.of(7), { expectedVersion: null, epoch: 3 });
      const key = store.keyOf('cart', 'u/1');
      expect(key).to.equal('app1:{cart/u/1}');
      const hash = await newClient().hgetall(key);
      expect(hash).to.deep.equal({ s: '\u0007', v: '1', e: '3' });
    });

    it('keeps stores with different prefixes apart', async () => {
      const a = newStore({ keyPrefix: 'pa:' });
      const b = newStore({ keyPrefix: 'pb:' });
      await a.write('k', 'x', Uint8Array.of(1), { expectedVersion: null, epoch: 1 });
      expect(await b.read('k', 'x')).to.equal(null);
    });
  });

  describe('options', () => {
    it('works on a client passed in and leaves it open on close()', async () => {
      const client = newClient();
      const store = new RedisStateStore({ client, keyPrefix: 'own:' });
      await store.write('k', 'x', Uint8Array.of(5), { expectedVersion: null, epoch: 1 });
      await store.close();
      expect(await client.hget('own:{k/x}', 'v')).to.equal('1');
    });

    it('rejects url together with client, a bad tombstoneTtlMs and a bad commandTimeoutMs', () => {
      expect(() => new RedisStateStore({ url: redis.url, client: newClient() })).to.throw(
        InvalidOptionError,
        /url or client/,
      );
      expect(() => new RedisStateStore({ tombstoneTtlMs: 1.5 })).to.throw(
        InvalidOptionError,
        /tombstoneTtlMs/,
      );
      expect(() => new RedisStateStore({ commandTimeoutMs: 0 })).to.throw(
        InvalidOptionError,
        /commandTimeoutMs/,
      );
    });

    it('takes an option given as undefined (an unset variable of a config object) for its default', async () => {
      // Spread over the defaults as given, keyPrefix: undefined made every key 'undefined{k/x}':
      // a member started without the variable kept its grains' state apart from the others'.
      const config: Record<string, unknown> = {
        keyPrefix: process.env.GRANARY_TEST_UNSET_PREFIX,
        durability: undefined,
        commandTimeoutMs: undefined,
        replicas: undefined,
      };
      const store = newStore(config as RedisStateStoreOptions);
      expect(store.keyOf('k', 'x')).to.equal('granary:state:{k/x}');
      await store.write('k', 'undef-opt', Uint8Array.of(1), { expectedVersion: null, epoch: 1 });
      expect(await newStore().read('k', 'undef-opt')).to.have.property('version', 1);
      expect(() => new RedisStateStore({ keyPrefix: 7 as unknown as string }))
        .to.throw(InvalidOptionError)
        .with.property('option', 'keyPrefix');
    });

    it('expires a tombstone after tombstoneTtlMs and a write makes the key permanent again', async () => {
      const store = newStore({ keyPrefix: 'ttl:', tombstoneTtlMs: 60_000 });
      const client = newClient();
      await store.write('k', 'x', Uint8Array.of(1), { expectedVersion: null, epoch: 1 });
      expect(await client.pttl('ttl:{k/x}')).to.equal(-1);
      await store.clear('k', 'x', { expectedVersion: 1, epoch: 1 });
      expect(await client.pttl('ttl:{k/x}')).to.be.within(1, 60_000);
      await store.write('k', 'x', Uint8Array.of(2), { expectedVersion: null, epoch: 1 });
      expect(await client.pttl('ttl:{k/x}')).to.equal(-1);
    });

    it('fails with StateUnavailableError after close()', async () => {
      const store = newStore();
      await store.close();
      const err = await store.read('k', 'x').catch((e: unknown) => e);
      expect(err).to.be.instanceOf(StateUnavailableError);
      expect((err as Error).message).to.contain('close()');
    });
  });

  describe('unexpected replies', () => {
    /** A client whose every command gets `reply` as a Redis error reply. */
    const replying = (reply: string): Redis => {
      const fail = (): Promise<never> => Promise.reject(new ReplyError(reply));
      return {
        status: 'ready',
        options: { commandTimeout: 1000 },
        defineCommand: () => undefined,
        on: () => undefined,
        granaryStateReadV1Buffer: fail,
        config: fail,
        info: fail,
      } as unknown as Redis;
    };

    it('maps replies that mean "not now" (loading, failover) to StateUnavailableError', async () => {
      for (const reply of [
        'LOADING Redis is loading the dataset in memory',
        "READONLY You can't write against a read only replica.",
      ]) {
        const store = new RedisStateStore({ client: replying(reply) });
        const err = await store.read('k', 'x').catch((e: unknown) => e);
        expect(err, reply).to.be.instanceOf(StateUnavailableError);
        expect((err as Error).message).to.contain(reply.split(' ')[0]);
      }
    });

    it('reports a foreign key under the prefix as StateStoreError, not as unavailable', async () => {
      const store = newStore({ keyPrefix: 'foreign:' });
      await newClient().set('foreign:{k/x}', 'not a hash');
      const err = await store
        .write('k', 'x', Uint8Array.of(1), { expectedVersion: null, epoch: 1 })
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(StateStoreError).and.not.to.be.instanceOf(StateUnavailableError);
      expect((err as StateStoreError).message)
        .to.contain('k/x')
        .and.to.contain('WRONGTYPE');
    });

    it('reads a version, lost mark or epoch that is not an integer as StateCorruptError of that grain only', async () => {
      const store = newStore({ keyPrefix: 'corrupt:' });
      const redisClient = newClient();
      const fields: Array<[string, string[]]> = [
        ['letters', ['s', 'x', 'v', 'abc', 'e', '1']],
        ['empty', ['s', 'x', 'v', '', 'e', '1']],
        ['fraction', ['s', 'x', 'v', '1.5', 'e', '1']],
        ['negative', ['s', 'x', 'v', '-3', 'e', '1']],
        ['zero', ['s', 'x', 'v', '0', 'e', '1']],
        ['overflow', ['s', 'x', 'v', '1e400', 'e', '1']],
        ['past-2^53', ['s', 'x', 'v', '9007199254740993', 'e', '1']],
        ['mark', ['s', 'x', 'v', '2', 'e', '1', 'l', 'zz']],
        ['epoch', ['s', 'x', 'v', '2', 'e', 'stale']],
        ['epoch-empty', ['s', 'x', 'v', '2', 'e', '']],
      ];
      await store.write('k', 'fine', Uint8Array.of(9), { expectedVersion: null, epoch: 1 });
      for (const [id, hash] of fields) {
        await redisClient.hset(store.keyOf('k', id), ...hash);
        const err = await store.read('k', id).catch((e: unknown) => e);
        expect(err, id).to.be.instanceOf(StateCorruptError);
        expect((err as StateCorruptError).message)
          .to.contain(`k/${id}`)
          .and.to.contain(store.keyOf('k', id));
      }
      expect(await store.read('k', 'fine')).to.deep.include({ version: 1 });
      expect(store.lossCounts).to.include({ lostGrains: 0, refusedCalls: 0 });
    });
  });
});

import { startRedis, type RedisHandle } from '@granary/testkit';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { Cluster } from '../../src/cluster';
import { kind } from '../../src/grains/kind';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';
import { StateDurabilityError, StateUnavailableError } from '../../src/state/errors';
import { RedisStateStore } from '../../src/state/redis/redis-state-store';
import type { RedisStateStoreOptions } from '../../src/state/redis/redis-state-store-options';
import { WriteThroughCounter } from './write-through-counter';

const first = { expectedVersion: null, epoch: 1 };

describe('RedisStateStore durability check (real Redis)', function () {
  this.timeout(30_000);
  const servers: RedisHandle[] = [];
  const stores: RedisStateStore[] = [];
  const clients: Redis[] = [];

  const redis = async (options: Parameters<typeof startRedis>[0] = {}): Promise<RedisHandle> => {
    const server = await startRedis(options);
    servers.push(server);
    return server;
  };
  const storeOn = (server: RedisHandle, options: RedisStateStoreOptions = {}): RedisStateStore => {
    const store = new RedisStateStore({ url: server.url, ...options });
    stores.push(store);
    return store;
  };
  const adminOf = (server: RedisHandle): Redis => {
    const client = new Redis(server.url);
    clients.push(client);
    return client;
  };
  const failure = async (promise: Promise<unknown>): Promise<StateDurabilityError> => {
    const err = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(StateDurabilityError);
    return err as StateDurabilityError;
  };

  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    clients.splice(0).forEach((c) => c.disconnect());
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  });

  describe("the default ('restart')", () => {
    it('refuses a Redis with appendonly no at start, naming the option and the setting, and keeps refusing', async () => {
      const store = storeOn(await redis({ appendonly: false }));
      const err = await failure(store.open());
      expect([err.code, err.durability, err.setting]).to.deep.equal([
        'ERR_STATE_DURABILITY',
        'restart',
        'appendonly',
      ]);
      expect(err.message)
        .to.contain("durability 'restart' (option durability, the default)")
        .and.contain('appendonly no')
        .and.contain("durability: 'none'");
      expect(StateDurabilityError.is(err)).to.equal(true);
      await failure(store.read('k', 'a'));
      await failure(store.write('k', 'a', Uint8Array.of(1), first));
    });

    it("refuses appendfsync everysec (Redis' default) at start, naming appendfsync; opens on no and always", async () => {
      const err = await failure(storeOn(await redis({ appendfsync: 'everysec' })).open());
      expect([err.durability, err.setting]).to.deep.equal(['restart', 'appendfsync']);
      expect(err.message)
        .to.contain("durability 'restart' (option durability, the default)")
        .and.contain('appendfsync everysec')
        .and.contain('before it replies');
      await storeOn(await redis({ appendfsync: 'no' })).open();
      await storeOn(await redis({ appendfsync: 'always' })).open();
    });

    it('Cluster.start with a persistent kind fails at start; nothing joins', async () => {
      const server = await redis({ appendonly: false });
      const store = storeOn(server);
      const table = new MemoryClusterTable();
      const start = Cluster.start({
        name: 'durability',
        provider: new MemoryProvider(table),
        kinds: [kind('counter', () => new WriteThroughCounter(store))],
        stateStores: [store],
      });
      const err = await failure(start);
      expect(err.message).to.contain('option durability').and.contain('appendonly');
      expect(table.topology().members).to.deep.equal([]);
    });

    it('opens on a Redis with appendonly yes; the weakest level, said explicitly, opens without it', async () => {
      await storeOn(await redis()).open();
      const bare = await redis({ appendonly: false });
      const store = storeOn(bare, { durability: 'none' });
      const table = new MemoryClusterTable();
      const cluster = await Cluster.start({
        name: 'durability',
        provider: new MemoryProvider(table),
        kinds: [kind('counter', () => new WriteThroughCounter(store))],
        stateStores: [store],
      });
      try {
        expect(await cluster.request('counter', 'a', 'inc')).to.equal(1);
      } finally {
        await cluster.shutdown();
      }
    });
  });

  describe("'fsync'", () => {
    it('needs appendfsync always (Redis before 7.2 has no WAITAOF), naming appendfsync', async () => {
      const everysec = await redis({ appendfsync: 'everysec' });
      const version = String(await adminOf(everysec).info('server')).match(
        /redis_version:(\S+)/,
      )![1]!;
      const store = storeOn(everysec, { durability: 'fsync' });
      if (/^(7\.[2-9]|[89]\.|\d\d)/.test(version)) {
        console.log(`      Redis ${version} has WAITAOF: the store waits per batch instead`);
        await store.open();
      } else {
        const err = await failure(store.open());
        expect(err.setting).to.equal('appendfsync');
        expect(err.message)
          .to.contain('appendfsync everysec')
          .and.contain(`Redis ${version} has no WAITAOF`);
      }
      const always = storeOn(await redis({ appendfsync: 'always' }), { durability: 'fsync' });
      expect(await always.write('k', 'a', Uint8Array.of(1), first)).to.equal(1);
    });
  });

  describe("'replicated'", () => {
    it('refuses a primary without the replicas it needs, naming replicas and connected_slaves', async () => {
      const err = await failure(storeOn(await redis(), { durability: 'replicated' }).open());
      expect(err.setting).to.equal('connected_slaves');
      expect(err.message).to.contain('option replicas').and.contain('shows 0');
    });

    it('waits for the replica once per write batch, and fails writes the replica does not acknowledge within durabilityTimeoutMs', async () => {
      const primary = await redis();
      const replica = await redis({ replicaOf: primary });
      const admin = adminOf(primary);
      await waitFor(async () => /slave0:.*state=online/.test(await admin.info('replication')));
      // Right after its full sync the replica rewrites its append-only file; wait until it acks.
      await waitFor(async () => {
        await admin.set('granary:probe', '1');
        return (await admin.wait(1, 1000)) === 1;
      });
      const store = storeOn(primary, {
        durability: 'replicated',
        commandTimeoutMs: 1000,
        durabilityTimeoutMs: 500,
      });
      await store.open();
      await admin.config('RESETSTAT');
      const versions = await Promise.all(
        Array.from({ length: 50 }, (_, i) => store.write('k', `g${i}`, Uint8Array.of(i), first)),
      );
      expect(versions).to.deep.equal(new Array(50).fill(1));
      const waits = Number(/cmdstat_wait:calls=(\d+)/.exec(await admin.info('commandstats'))![1]);
      expect(waits, 'WAIT calls for one batch of 50 writes').to.equal(1);

      replica.pause();
      try {
        const started = Date.now();
        const err = await store.write('k', 'late', Uint8Array.of(1), first).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).to.be.instanceOf(StateUnavailableError);
        expect((err as Error).message)
          .to.contain('0 of 1 replica')
          .and.contain('durabilityTimeoutMs')
          .and.contain('outcome is unknown');
        expect(Date.now() - started).to.be.below(1000);
      } finally {
        replica.resume();
      }
    });
  });

  describe('a Redis that refuses CONFIG (managed Redis)', () => {
    it('fails naming serverPersistence; a declared serverPersistence is used instead', async () => {
      const managed = await redis({ args: ['--rename-command', 'CONFIG', ''] });
      const err = await failure(storeOn(managed).open());
      expect(err.setting).to.equal('serverPersistence');
      expect(err.message).to.contain('CONFIG GET failed').and.contain('serverPersistence');
      const declared = storeOn(managed, {
        serverPersistence: { appendonly: true, appendfsync: 'always' },
      });
      expect(await declared.write('k', 'a', Uint8Array.of(1), first)).to.equal(1);
      const everysec = storeOn(managed, {
        serverPersistence: { appendonly: true, appendfsync: 'everysec' },
      });
      expect((await failure(everysec.open())).setting).to.equal('appendfsync');
      const wrong = storeOn(managed, { serverPersistence: { appendonly: false } });
      expect((await failure(wrong.open())).message).to.contain('declared in serverPersistence');
    });
  });

  describe('after a reconnection', () => {
    it('checks again: a server that turned its append-only file off refuses writes until it is back on', async () => {
      const server = await redis();
      const admin = adminOf(server);
      const store = storeOn(server);
      expect(await store.write('k', 'a', Uint8Array.of(1), first)).to.equal(1);
      await admin.config('SET', 'appendonly', 'no');
      await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
      await waitFor(async () =>
        store.write('k', 'b', Uint8Array.of(1), first).then(
          () => false,
          (e: unknown) => e instanceof StateDurabilityError,
        ),
      );
      expect((await store.read('k', 'a'))?.version, 'reads still work').to.equal(1);
      await admin.config('SET', 'appendonly', 'yes');
      await waitFor(async () =>
        store.write('k', 'c', Uint8Array.of(1), first).then(
          () => true,
          () => false,
        ),
      );
    });
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

import { errorsOnlyLogger, startRedis, type RedisHandle } from '@granary/testkit';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { Cluster } from '../../src/cluster';
import { kind } from '../../src/grains/kind';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';
import { ReminderStoreUnavailableError } from '../../src/reminders/errors';
import { RedisReminderStore } from '../../src/reminders/redis/redis-reminder-store';
import type { RedisReminderStoreOptions } from '../../src/reminders/redis/redis-reminder-store-options';
import type { ReminderSpec } from '../../src/reminders/reminder-store';
import { StateDurabilityError } from '../../src/state/errors';

const SPEC: ReminderSpec = {
  dueAt: 1_800_000_000_000,
  periodMs: 1000,
  catchUp: 'skip',
  maxAttempts: 5,
  backoffMs: 1000,
};

/** What a call rejected with (fails the test if it resolved). */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'the call was expected to fail').to.be.instanceOf(Error);
  return err as Error;
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('RedisReminderStore durability levels (the state store check, real Redis)', function () {
  this.timeout(60_000);
  const servers: RedisHandle[] = [];
  const stores: RedisReminderStore[] = [];
  const clients: Redis[] = [];

  const redis = async (options: Parameters<typeof startRedis>[0] = {}): Promise<RedisHandle> => {
    const server = await startRedis(options);
    servers.push(server);
    return server;
  };
  const storeOn = (server: RedisHandle, options: RedisReminderStoreOptions = {}) => {
    const store = new RedisReminderStore({ url: server.url, ...options });
    stores.push(store);
    return store;
  };
  const adminOf = (server: RedisHandle): Redis => {
    const client = new Redis(server.url);
    clients.push(client);
    return client;
  };

  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    clients.splice(0).forEach((c) => c.disconnect());
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  });

  it("refuses a Redis with appendonly no by default ('restart'), naming the setting; every call fails the same", async () => {
    const store = storeOn(await redis({ appendonly: false }));
    const err = await rejection(store.open());
    expect(err).to.be.instanceOf(StateDurabilityError);
    const d = err as StateDurabilityError;
    expect([d.code, d.durability, d.setting]).to.deep.equal([
      'ERR_STATE_DURABILITY',
      'restart',
      'appendonly',
    ]);
    expect(d.message).to.contain('option durability, the default').and.contain('appendonly no');
    expect(await rejection(store.put('k', 0, 'a', 'r', SPEC))).to.equal(err);
    expect(await rejection(store.load('k', 0, 1))).to.equal(err);
  });

  it('Cluster.start with that store fails before the member joins', async () => {
    const table = new MemoryClusterTable();
    const store = storeOn(await redis({ appendonly: false }));
    const err = await rejection(
      Cluster.start({
        name: 'reminder-durability',
        id: 'rd',
        provider: new MemoryProvider(table, { ttlMs: 1000 }),
        kinds: [kind('k', () => ({ receive: () => undefined }), { shardCount: 2 })],
        reminders: { store },
        logger: errorsOnlyLogger,
      }),
    );
    expect(err).to.be.instanceOf(StateDurabilityError);
    expect(table.topology().members, 'members in the table').to.deep.equal([]);
  });

  it("opens with appendonly yes, and with 'none' said explicitly on a Redis without persistence", async () => {
    const store = storeOn(await redis());
    await store.open();
    const stored = await store.put('k', 0, 'a', 'r', SPEC);
    expect(stored.gen).to.equal(1);
    const bare = storeOn(await redis({ appendonly: false }), { durability: 'none' });
    await bare.open();
    expect((await bare.put('k', 0, 'a', 'r', SPEC)).gen).to.equal(1);
  });

  it("'replicated' refuses a primary without replicas, then awaits WAIT after each claim batch", async () => {
    const lonely = storeOn(await redis(), { durability: 'replicated' });
    const err = (await rejection(lonely.open())) as StateDurabilityError;
    expect(err.setting).to.equal('connected_slaves');

    const primary = await redis();
    const replica = await redis({ replicaOf: primary });
    const admin = adminOf(primary);
    await waitFor('the replica online and acknowledging', async () => {
      if (!/slave0:.*state=online/.test(await admin.info('replication'))) return false;
      await admin.set('granary:probe', '1');
      return (await admin.wait(1, 1000)) === 1;
    });
    const store = storeOn(primary, {
      durability: 'replicated',
      commandTimeoutMs: 1000,
      durabilityTimeoutMs: 500,
    });
    await store.open();
    const stored = await store.put('k', 3, 'a', 'r', SPEC);
    await store.load('k', 3, 1);
    await admin.config('RESETSTAT');
    const claim = { id: 'a', name: 'r', gen: stored.gen, tick: 0 };
    expect(await store.claim('k', 3, 1, [claim])).to.deep.equal(['ok']);
    const waits = Number(/cmdstat_wait:calls=(\d+)/.exec(await admin.info('commandstats'))![1]);
    expect(waits, 'WAIT calls after one claim batch').to.equal(1);

    replica.pause();
    try {
      const e = await rejection(store.claim('k', 3, 1, [{ ...claim, tick: 1 }]));
      expect(e, e.message).to.be.instanceOf(ReminderStoreUnavailableError);
      expect(e.message).to.contain('0 of 1 replica').and.contain('outcome is unknown');
    } finally {
      replica.resume();
    }
    // The claim reached the primary: the same owner asking again (its retry) gets it again,
    // acknowledged this time; another owner (a higher epoch) would be told taken.
    expect(await store.claim('k', 3, 1, [{ ...claim, tick: 1 }])).to.deep.equal(['ok']);
    await store.load('k', 3, 2);
    expect(await store.claim('k', 3, 2, [{ ...claim, tick: 1 }])).to.deep.equal(['taken']);
  });

  it('checks again after a reconnection: writes are refused while the server has no append-only file', async () => {
    const server = await redis();
    const admin = adminOf(server);
    const store = storeOn(server);
    await store.put('k', 0, 'a', 'r', SPEC);
    await admin.config('SET', 'appendonly', 'no');
    await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    await waitFor('writes refused with StateDurabilityError', () =>
      store.put('k', 0, 'b', 'r', SPEC).then(
        () => false,
        (e: unknown) => e instanceof StateDurabilityError,
      ),
    );
    expect((await store.get('k', 0, 'a', 'r'))?.gen, 'reads still work').to.equal(1);
    await admin.config('SET', 'appendonly', 'yes');
    await waitFor('writes accepted again', () =>
      store.put('k', 0, 'c', 'r', SPEC).then(
        () => true,
        () => false,
      ),
    );
  });
});

import { startRedis, type RedisHandle } from '@granary/testkit';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { RedisReminderStore } from '../../src/reminders/redis/redis-reminder-store';
import { RedisStateStore } from '../../src/state/redis/redis-state-store';

const SPEC = { dueAt: 1, periodMs: 60_000, catchUp: 'skip', maxAttempts: 1, backoffMs: 0 } as const;

/** The store's own client (what its redials close and open again). */
function clientOf(store: RedisStateStore | RedisReminderStore): Redis {
  return (store as unknown as { client: Redis }).client;
}

// A store dials again on its own (ReplicaRedial after a READONLY, SilentConnection after a
// silence) by ending its socket; ioredis says 'ready' until the socket has closed. A call made in
// that window failed at once, "Stream isn't writeable" (CI, a reminder write during a
// switch-over), where a call made a moment later waited for the next connection.
describe('a Redis store whose own dial is closing its socket (real Redis)', function () {
  this.timeout(30_000);
  let redis: RedisHandle;
  const stores: Array<RedisStateStore | RedisReminderStore> = [];

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    for (const s of stores) await s.close();
    await redis?.stop();
  });

  it('the state store waits for the next connection: the write succeeds', async () => {
    const store = new RedisStateStore({ url: redis.url, commandTimeoutMs: 2000 });
    stores.push(store);
    await store.write('k', 'a', Uint8Array.of(1), { expectedVersion: null, epoch: 1 });
    clientOf(store).disconnect(true);
    expect(clientOf(store).status, 'still says ready while closing').to.equal('ready');
    const version = await store.write('k', 'a', Uint8Array.of(2), { expectedVersion: 1, epoch: 1 });
    expect(version).to.equal(2);
    expect((await store.read('k', 'a'))?.state).to.deep.equal(Uint8Array.of(2));
  });

  it('the reminder store waits for the next connection: the write succeeds', async () => {
    const store = new RedisReminderStore({ url: redis.url, commandTimeoutMs: 2000 });
    stores.push(store);
    await store.put('k', 0, 'g', 'before', SPEC);
    clientOf(store).disconnect(true);
    expect(clientOf(store).status, 'still says ready while closing').to.equal('ready');
    await store.put('k', 0, 'g', 'after', SPEC);
    expect((await store.list('k', 0, 'g')).map((r) => r.name).sort()).to.deep.equal([
      'after',
      'before',
    ]);
  });
});

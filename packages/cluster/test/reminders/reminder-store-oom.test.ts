import { startRedis, type RedisHandle } from '@granary/testkit';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { ReminderError } from '../../src/reminders/errors';
import { RedisReminderStore } from '../../src/reminders/redis/redis-reminder-store';
import { rejection, SPEC } from './reminder-store-conformance';

// Redis past maxmemory with noeviction refuses commands that grow memory (OOM). A Lua script
// without flags is refused only at its first such command, and not at all once it has written
// anything: a script that deleted a field first could go on to store a new reminder past the
// limit, which Redis meant to refuse.
describe('RedisReminderStore on a Redis over maxmemory (noeviction)', function () {
  this.timeout(30_000);
  let redis: RedisHandle;
  let admin: Redis;
  let store: RedisReminderStore;

  before(async () => {
    redis = await startRedis();
    admin = new Redis(redis.url);
    store = new RedisReminderStore({ url: redis.url });
  });
  after(async () => {
    await store?.close();
    admin?.disconnect();
    await redis?.stop();
  });
  afterEach(() => admin.config('SET', 'maxmemory', '0'));

  it('refuses a new reminder with ReminderError naming OOM, stores nothing, and takes it once memory is back', async () => {
    await store.put('oom', 0, 'g-1', 'first', SPEC);
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    await admin.config('SET', 'maxmemory', '1');

    const err = await rejection(store.put('oom', 0, 'g-2', 'second', SPEC));
    expect(err).to.be.instanceOf(ReminderError);
    expect((err as Error).message).to.match(/OOM/);
    expect(await store.list('oom', 0, 'g-2')).to.deep.equal([]);
    // A reminder stored before is untouched, and removing one is allowed (it frees memory).
    expect((await store.list('oom', 0, 'g-1')).map((r) => r.name)).to.deep.equal(['first']);

    await admin.config('SET', 'maxmemory', '0');
    await store.put('oom', 0, 'g-2', 'second', SPEC);
    expect((await store.list('oom', 0, 'g-2')).map((r) => r.name)).to.deep.equal(['second']);
  });

  it('refuses to replace a reminder past maxmemory as well', async () => {
    await store.put('oom', 1, 'g-3', 'r', SPEC);
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    await admin.config('SET', 'maxmemory', '1');
    const err = await rejection(store.put('oom', 1, 'g-3', 'r', { ...SPEC, periodMs: 999 }));
    expect(err).to.be.instanceOf(ReminderError);
    const [kept] = await store.list('oom', 1, 'g-3');
    expect(kept?.spec.periodMs).to.equal(SPEC.periodMs);
  });
});

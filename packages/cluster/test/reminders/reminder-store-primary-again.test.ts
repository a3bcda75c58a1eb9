import { startRedis, type RedisHandle } from '@granary/testkit';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { ReminderStoreUnavailableError } from '../../src/reminders/errors';
import { RedisReminderStore } from '../../src/reminders/redis/redis-reminder-store';
import { connectionsReceived, untilInfo } from '../state/fixtures/redis-info';

const SPEC = { dueAt: 1, periodMs: 60_000, catchUp: 'skip', maxAttempts: 1, backoffMs: 0 } as const;

// A write refused READONLY schedules a dial after a pause (0.1 s doubling to 5 s while the server
// stays a replica). When the server is the primary again by the time the pause ends (a failover
// back, an operator's REPLICAOF NO ONE), the store checks it on the connection it has, as the
// state store does: a dial then would only drop the commands in flight.
describe('RedisReminderStore when its server is the primary again (real Redis)', function () {
  this.timeout(60_000);
  let a: RedisHandle;
  let b: RedisHandle;
  let admin: Redis;
  let store: RedisReminderStore | undefined;

  before(async () => {
    a = await startRedis();
    b = await startRedis();
    admin = new Redis(a.url);
  });
  after(async () => {
    await store?.close();
    admin?.disconnect();
    await b?.stop();
    await a?.stop();
  });

  it('keeps its connection after a pause that ends on a primary, and writes again', async () => {
    store = new RedisReminderStore({ url: a.url, commandTimeoutMs: 1000 });
    await store.put('k', 0, 'g', 'before', SPEC);
    await admin.replicaof('127.0.0.1', b.port);
    await untilInfo(admin, 'replication', /master_link_status:up/);

    // Refused writes while the server stays a replica: the store dials again three times, so
    // the pause after the next refusal is 0.4-0.8 s, long enough to turn the server back first.
    const from = await connectionsReceived(admin);
    const until = Date.now() + 20_000;
    for (;;) {
      const err = await store.put('k', 0, 'g', 'refused', SPEC).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err, 'a write on a replica').to.be.instanceOf(ReminderStoreUnavailableError);
      if ((await connectionsReceived(admin)) - from >= 3 && /READONLY/.test(err!.message)) break;
      expect(Date.now(), 'three dials while a replica').to.be.below(until);
      await new Promise((r) => setTimeout(r, 20));
    }
    await admin.replicaof('NO', 'ONE');
    const dialled = await connectionsReceived(admin);
    await new Promise((r) => setTimeout(r, 1500)); // past the pause

    expect((await connectionsReceived(admin)) - dialled, 'dials after the pause').to.equal(0);
    await store.put('k', 0, 'g', 'after', SPEC);
    expect((await store.list('k', 0, 'g')).map((r) => r.name)).to.include('after');
  });
});

import { startRedis, type RedisHandle } from '@granary/testkit';
import { InvalidOptionError } from '@granary/core';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { ReminderStoreUnavailableError } from '../../src/reminders/errors';
import { MemoryReminderStore } from '../../src/reminders/memory/memory-reminder-store';
import {
  RedisReminderStore,
  type RedisReminderStoreOptions,
} from '../../src/reminders/redis/redis-reminder-store';
import { describeReminderStoreConformance } from './reminder-store-conformance';

describe('MemoryReminderStore', () => {
  describeReminderStoreConformance(() => Promise.resolve(new MemoryReminderStore()));
});

describe('RedisReminderStore', function () {
  this.timeout(20_000);
  let redis: RedisHandle;
  const stores: RedisReminderStore[] = [];

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await redis?.stop();
  });

  describeReminderStoreConformance(() => {
    const s = new RedisReminderStore({ url: redis.url });
    stores.push(s);
    return Promise.resolve(s);
  });

  it('keeps a shard in one hash tag (Redis Cluster slot)', async () => {
    const s = new RedisReminderStore({ url: redis.url, keyPrefix: 'p:' });
    stores.push(s);
    expect(s.keyOf('a/b', 7)).to.equal('p:{a%2Fb/7}');
    await s.put('a/b', 7, 'g', 'r', {
      dueAt: 1,
      periodMs: 100,
      catchUp: 'skip',
      maxAttempts: 1,
      backoffMs: 0,
    });
    const client = new Redis(redis.url);
    try {
      const keys = (await client.keys('p:*')).sort();
      // Beside the shard's hash: the store's identity marker (reminder-store-loss.ts).
      expect(keys).to.deep.equal(['p:store', 'p:{a%2Fb/7}']);
    } finally {
      client.disconnect();
    }
  });

  it('takes an option given as undefined for its default (keys were "undefined{k/0}")', () => {
    const config: Record<string, unknown> = {
      url: redis.url,
      keyPrefix: undefined,
      durability: undefined,
      commandTimeoutMs: undefined,
      replicas: undefined,
    };
    const s = new RedisReminderStore(config as RedisReminderStoreOptions);
    stores.push(s);
    expect(s.keyOf('k', 0)).to.equal('granary:reminders:{k/0}');
    expect(() => new RedisReminderStore({ keyPrefix: null as unknown as string }))
      .to.throw(InvalidOptionError)
      .with.property('option', 'keyPrefix');
  });

  it("tells the time by Redis' clock (TIME), in epoch ms", async () => {
    const s = new RedisReminderStore({ url: redis.url });
    stores.push(s);
    const before = Date.now();
    const at = await s.time();
    // The same host's clock: within the round trip, at ms resolution.
    expect(at).to.be.within(before - 1, Date.now() + 1);
  });

  it('fails fast with ReminderStoreUnavailableError when Redis is away', async () => {
    const s = new RedisReminderStore({ url: 'redis://127.0.0.1:1', commandTimeoutMs: 200 });
    stores.push(s);
    const t0 = Date.now();
    const err = await s.load('k', 0, 1).catch((e: unknown) => e);
    expect(ReminderStoreUnavailableError.is(err)).to.equal(true);
    expect(Date.now() - t0).to.be.lessThan(1000);
  });
});

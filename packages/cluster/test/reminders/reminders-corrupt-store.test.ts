import { recordingLogger, startRedis, type RedisHandle } from '@granary/testkit';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { Cluster } from '../../src/cluster';
import type { Grain, GrainContext } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';
import { ReminderCorruptError } from '../../src/reminders/errors';
import { RedisReminderStore } from '../../src/reminders/redis/redis-reminder-store';
import { isReminderFire } from '../../src/reminders/reminder';
import { rejection, SPEC } from './reminder-store-conformance';

/** Field of reminder `name` of grain `id` in its shard's hash (reminder-scripts.ts). */
const field = (id: string, name: string): string => `${id.length}:${id}${name}`;

// What another program with access to the Redis (or damage) can leave in a reminder's fields:
// each must cost that reminder only, with a ReminderCorruptError, never its shard or its member.
describe('RedisReminderStore with corrupt values in Redis', function () {
  this.timeout(30_000);
  let redis: RedisHandle;
  let raw: Redis;
  let store: RedisReminderStore;
  let lines: ReturnType<typeof recordingLogger>['lines'];
  let k: string;
  let n = 0;

  before(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
  });
  after(async () => {
    raw?.disconnect();
    await redis?.stop();
  });
  beforeEach(() => {
    const rec = recordingLogger();
    lines = rec.lines;
    store = new RedisReminderStore({ url: redis.url, logger: rec.logger });
    k = `corrupt-${++n}`;
  });
  afterEach(() => store.close());

  /** Stores good/r and three reminders whose schedule or last tick someone else wrote. */
  async function shardWithCorruptReminders(shard: number): Promise<string> {
    await store.put(k, shard, 'good', 'r', SPEC);
    for (const id of ['json', 'period', 'tick']) await store.put(k, shard, id, 'r', SPEC);
    const key = store.keyOf(k, shard);
    await raw.hset(key, `s${field('json', 'r')}`, '1 0 {not json');
    await raw.hset(
      key,
      `s${field('period', 'r')}`,
      `1 0 ${JSON.stringify({ ...SPEC, periodMs: '5' })}`,
    );
    await raw.hset(key, `t${field('tick', 'r')}`, 'zz');
    return key;
  }

  it('loads the other reminders of a shard, and logs each corrupt one as ReminderCorruptError', async () => {
    await shardWithCorruptReminders(0);
    await shardWithCorruptReminders(1);
    // Before: SyntaxError out of the whole load (the owner retried it forever, firing nothing).
    const one = await store.load(k, 0, 1);
    expect(one.map((r) => r.id)).to.deep.equal(['good']);
    const many = await store.loadMany(k, [
      { shard: 0, epoch: 2 },
      { shard: 1, epoch: 1 },
    ]);
    for (const shard of many) {
      expect(shard).to.be.an('array');
      expect((shard as Array<{ id: string }>).map((r) => r.id)).to.deep.equal(['good']);
    }
    expect(store.corruptReminders).to.equal(9);
    const logged = lines.filter((l) => l.level === 'error');
    // Throttled: the first one as it is, the rest counted.
    expect(logged).to.have.length(1);
    const err = logged[0]!.fields.err as ReminderCorruptError;
    expect(err).to.be.instanceOf(ReminderCorruptError);
    expect(err.code).to.equal('ERR_REMINDER_CORRUPT');
    expect(err.message).to.match(
      /of corrupt-\d+\/(json|period|tick) is corrupt .*; set it again or delete it$/,
    );
  });

  it('reads a corrupt reminder as absent for its owner, and list() throws ReminderCorruptError', async () => {
    await shardWithCorruptReminders(2);
    expect(await store.get(k, 2, 'json', 'r')).to.equal(undefined);
    expect((await store.get(k, 2, 'good', 'r'))?.name).to.equal('r');
    const err = await rejection(store.list(k, 2, 'period'));
    expect(err).to.be.instanceOf(ReminderCorruptError);
    expect((err as Error).message).to.include('periodMs "5"');
    expect(await store.list(k, 2, 'good')).to.have.length(1);
  });

  it('lets set replace a corrupt reminder (its Lua script failed on it) and delete remove it', async () => {
    const key = await shardWithCorruptReminders(3);
    await raw.hset(key, `s${field('json', 'r')}`, 'garbage');
    for (const id of ['json', 'period', 'tick']) {
      const stored = await store.put(k, 3, id, 'r', { ...SPEC, dueAt: 2000 });
      expect(stored.spec.dueAt).to.equal(2000);
      expect((await store.get(k, 3, id, 'r'))?.spec.dueAt).to.equal(2000);
    }
    expect((await store.load(k, 3, 1)).map((r) => r.id).sort()).to.deep.equal([
      'good',
      'json',
      'period',
      'tick',
    ]);
    await raw.hset(key, `s${field('json', 'r')}`, 'garbage');
    expect(await store.remove(k, 3, 'json', 'r')).to.equal(true);
  });

  it("claims a shard's other ticks when one reminder's last tick was overwritten", async () => {
    const key = store.keyOf(k, 4);
    const a = await store.put(k, 4, 'a', 'r', SPEC);
    const b = await store.put(k, 4, 'b', 'r', SPEC);
    await store.load(k, 4, 1);
    await raw.hset(key, `t${field('b', 'r')}`, 'not a tick');
    // Before: the claim script failed on b's value (a nil compared), refusing a's claim too.
    const got = await store.claim(k, 4, 1, [
      { id: 'a', name: 'r', gen: a.gen, tick: 0 },
      { id: 'b', name: 'r', gen: b.gen, tick: 0 },
    ]);
    expect(got).to.deep.equal(['ok', 'ok']);
  });

  it('throws ReminderCorruptError for a job outcome that is not JSON', async () => {
    await raw.hset(`${store.keyOf(k, 5)}:o`, field('job', 'j'), '{"status":');
    const err = await rejection(store.outcome(k, 5, 'job', 'j'));
    expect(err).to.be.instanceOf(ReminderCorruptError);
    expect((err as ReminderCorruptError).key).to.equal(`${store.keyOf(k, 5)}:o`);
  });
});

/** Fires received, by grain identity. */
const fired = new Map<string, number>();

class Beat implements Grain {
  receive(ctx: GrainContext): undefined {
    if (isReminderFire(ctx.message)) fired.set(ctx.identity, (fired.get(ctx.identity) ?? 0) + 1);
    return undefined;
  }
}

describe('reminders of a member whose shard holds a corrupt reminder', function () {
  this.timeout(30_000);
  let redis: RedisHandle;
  const closers: Array<() => Promise<void>> = [];

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    for (const close of closers.reverse()) await close();
    await redis?.stop();
  });

  it("fires the shard's other reminders", async () => {
    const setup = new RedisReminderStore({ url: redis.url });
    const periodic = { ...SPEC, dueAt: Date.now(), catchUp: 'skip' as const };
    // One shard: every reminder of the kind is in the same hash, loaded by one call.
    await setup.put('beat', 0, 'b-good', 'r', periodic);
    await setup.put('beat', 0, 'b-bad', 'r', periodic);
    const raw = new Redis(redis.url);
    await raw.hset(setup.keyOf('beat', 0), `s${field('b-bad', 'r')}`, '1 0 [');
    raw.disconnect();
    await setup.close();

    const store = new RedisReminderStore({ url: redis.url });
    const { logger, lines } = recordingLogger();
    const member = await Cluster.start({
      name: 'corrupt-reminders',
      id: 'm1',
      provider: new MemoryProvider(new MemoryClusterTable(), { ttlMs: 1000 }),
      kinds: [kind('beat', () => new Beat(), { shardCount: 1 })],
      remote: { host: '127.0.0.1', port: 0 },
      reminders: { store },
      logger,
    });
    closers.push(() => store.close());
    closers.push(() => member.shutdown({ graceful: false }));
    const t0 = Date.now();
    while ((fired.get('b-good') ?? 0) < 3) {
      if (Date.now() - t0 > 10_000) throw new Error('b-good fired fewer than 3 times in 10 s');
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(fired.get('b-bad')).to.equal(undefined);
    expect(store.corruptReminders).to.be.greaterThanOrEqual(1);
    const corrupt = lines.filter((l) => ReminderCorruptError.is(l.fields.err));
    expect(corrupt[0]?.msg).to.match(/reminder 'r' of beat\/b-bad is corrupt/);
  });
});

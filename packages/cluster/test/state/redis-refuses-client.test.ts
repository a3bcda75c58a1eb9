import { recordingLogger, startRedis, type RedisHandle } from '@granary/testkit';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { ReminderStoreUnavailableError } from '../../src/reminders/errors';
import { RedisReminderStore } from '../../src/reminders/redis/redis-reminder-store';
import { StateUnavailableError } from '../../src/state/errors';
import { RedisStateStore } from '../../src/state/redis/redis-state-store';

const SPEC = { dueAt: 1, periodMs: 60_000, catchUp: 'skip', maxAttempts: 1, backoffMs: 0 } as const;

// An operator sets a password on a running Redis (or rotates it) and its clients are dropped:
// the stores dial again and are refused NOAUTH on every connection.
describe('Redis stores when Redis refuses their connection (a password set under them)', function () {
  this.timeout(60_000);
  let redis: RedisHandle;
  let state: RedisStateStore | undefined;
  let reminders: RedisReminderStore | undefined;

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await state?.close();
    await reminders?.close();
    await redis?.stop();
  });

  it('calls fail within commandTimeoutMs naming the refusal, it is logged, and the stores carry on once it is lifted', async () => {
    const { logger, lines } = recordingLogger();
    state = new RedisStateStore({ url: redis.url, commandTimeoutMs: 1000, logger });
    reminders = new RedisReminderStore({ url: redis.url, commandTimeoutMs: 1000, logger });
    await state.write('k', 'a', Buffer.from('1'), { expectedVersion: null, epoch: 1 });
    await reminders.put('k', 0, 'g', 'kept', SPEC);
    const admin = new Redis(redis.url);
    try {
      await admin.config('SET', 'requirepass', 'secret');
      await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
      // Before, every call said only "Redis not connected (status reconnecting)" (the state
      // store) or "command timed out" (the reminder store), and nothing logged NOAUTH.
      const started = Date.now();
      await new Promise((r) => setTimeout(r, 300)); // a dial or two refused first
      const read = await state.read('k', 'a').catch((e: unknown) => e as Error);
      expect(StateUnavailableError.is(read), String(read)).to.equal(true);
      expect((read as Error).message).to.match(/NOAUTH/);
      const write = await state
        .write('k', 'b', Buffer.from('1'), { expectedVersion: null, epoch: 1 })
        .catch((e: unknown) => e as Error);
      expect(StateUnavailableError.is(write), String(write)).to.equal(true);
      // Never sent: nothing was written, and the error does not say the outcome is unknown.
      expect((write as Error).message)
        .to.match(/NOAUTH/)
        .and.not.match(/outcome is unknown/);
      const put = await reminders.put('k', 0, 'g', 'new', SPEC).catch((e: unknown) => e as Error);
      expect(put).to.be.instanceOf(ReminderStoreUnavailableError);
      expect((put as Error).message).to.match(/NOAUTH/);
      expect(Date.now() - started, 'three calls, each bounded by 1000 ms').to.be.below(6000);
      expect(lines.some((l) => /NOAUTH/.test(String(l.fields.detail)))).to.equal(true);
      expect(lines.length, 'lines logged').to.be.at.most(10);

      await admin.auth('secret');
      await admin.config('SET', 'requirepass', '');
    } finally {
      admin.disconnect();
    }
    const until = Date.now() + 10_000;
    for (;;) {
      const ok = await state.read('k', 'a').then(
        (r) => r,
        () => undefined,
      );
      if (ok !== undefined) {
        expect(ok?.state.toString()).to.equal('1');
        break;
      }
      expect(Date.now(), 'the state store back').to.be.below(until);
      await new Promise((r) => setTimeout(r, 100));
    }
    for (;;) {
      const list = await reminders.list('k', 0, 'g').catch(() => undefined);
      if (list !== undefined) {
        expect(list.map((r) => r.name)).to.deep.equal(['kept']);
        break;
      }
      expect(Date.now(), 'the reminder store back').to.be.below(until);
      await new Promise((r) => setTimeout(r, 100));
    }
  });
});

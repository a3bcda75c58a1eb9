import {
  redisSentinelUnavailable,
  respCommand,
  startRedisSentinel,
  type RedisSentinelHandle,
} from '@granary/testkit';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { ReminderStoreUnavailableError } from '../../src/reminders/errors';
import { RedisReminderStore } from '../../src/reminders/redis/redis-reminder-store';
import { untilInfo } from '../state/fixtures/redis-info';

const SPEC = { dueAt: 1, periodMs: 60_000, catchUp: 'skip', maxAttempts: 1, backoffMs: 0 } as const;

/** Sends `command` to a server or Sentinel until it answers OK (bounded), returning nothing. */
async function untilOk(port: number, command: string[], timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const reply = await respCommand(port, command);
    if (reply === 'OK') return;
    if (Date.now() > until) throw new Error(`${command.join(' ')}: ${String(reply)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

// A planned switch-over: Redis' own FAILOVER command hands the primary role to the replica, and
// the operator points Sentinel at the new primary. Unlike a failover Sentinel runs itself (which
// kills the old primary's client connections), the old primary keeps the store's connection open
// as a replica: every write on it is refused READONLY.
describe('RedisReminderStore through a switch-over to the replica (real Sentinel)', function () {
  this.timeout(60_000);
  let rs: RedisSentinelHandle | undefined;
  let store: RedisReminderStore | undefined;

  before(async function () {
    const why = redisSentinelUnavailable();
    if (why !== undefined) {
      console.log(`skipped: ${why}`);
      this.skip();
    }
    rs = await startRedisSentinel({ replicas: 1 });
  });
  after(async () => {
    await store?.close();
    await rs?.stop();
  });

  it('follows it: writes reach the new primary within seconds, refused meanwhile with a typed error, nothing acknowledged lost', async () => {
    store = new RedisReminderStore({
      redisOptions: { sentinels: [...rs!.sentinels], name: rs!.name },
      commandTimeoutMs: 1000,
    });
    await store.put('k', 0, 'g', 'before', SPEC);
    const old = await rs!.primary();
    const next = rs!.servers.find((s) => s !== old)!;
    const admin = new Redis(next.url);
    try {
      await respCommand(old.port, ['FAILOVER']);
      await untilInfo(admin, 'replication', /role:master/);
    } finally {
      admin.disconnect();
    }
    const sentinel = rs!.sentinels[0]!.port;
    await untilOk(sentinel, ['SENTINEL', 'REMOVE', rs!.name]);
    await untilOk(sentinel, ['SENTINEL', 'MONITOR', rs!.name, '127.0.0.1', String(next.port), '1']);

    const started = Date.now();
    const refusals: string[] = [];
    for (;;) {
      const err = await store.put('k', 0, 'g', 'after', SPEC).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      if (err === undefined) break;
      expect(err).to.be.instanceOf(ReminderStoreUnavailableError);
      refusals.push(err.message);
      // Before, nothing dialled again: every write failed READONLY on the old primary.
      expect(Date.now() - started, `still refused: ${refusals.at(-1)}`).to.be.below(10_000);
      await new Promise((r) => setTimeout(r, 100));
    }
    // Refused READONLY on the old primary; a write while the new connection is still being made
    // (Sentinel asked, dialled, checked) waits for it, and on a slow host may be refused as
    // unavailable within commandTimeoutMs.
    expect(refusals[0], refusals.join(' | ')).to.match(/READONLY/);
    expect(
      refusals.every((m) =>
        /READONLY|unavailable within 1000 ms \(commandTimeoutMs\): Redis not connected/.test(m),
      ),
      refusals.join(' | '),
    ).to.equal(true);
    expect((await store.list('k', 0, 'g')).map((r) => r.name).sort()).to.deep.equal([
      'after',
      'before',
    ]);
  });
});

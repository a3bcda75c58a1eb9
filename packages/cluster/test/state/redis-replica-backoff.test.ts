import { recordingLogger, startRedis, type RedisHandle } from '@granary/testkit';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { StateWriteRefusedError } from '../../src/state/errors';
import { RedisStateStore } from '../../src/state/redis/redis-state-store';
import { connectionsReceived, untilInfo } from './fixtures/redis-info';

// The store's Redis turned replica of another, empty primary (an operator's REPLICAOF, a failover
// that picked a server of another deployment): every command that writes is refused READONLY, the
// identity check after each reconnection among them, since the marker went with the old data.
describe('RedisStateStore on a replica without its identity marker', function () {
  this.timeout(60_000);
  let a: RedisHandle;
  let b: RedisHandle;
  let adminA: Redis;
  let store: RedisStateStore;

  before(async () => {
    a = await startRedis();
    b = await startRedis();
    adminA = new Redis(a.url);
  });
  after(async () => {
    await store?.close();
    adminA?.disconnect();
    await b?.stop();
    await a?.stop();
  });

  it('dials again with a growing back-off and a throttled log, not ~20 times a second', async () => {
    const { logger, lines } = recordingLogger();
    store = new RedisStateStore({ url: a.url, commandTimeoutMs: 1000, logger });
    await store.write('k', 'x', Buffer.from('1'), { expectedVersion: null, epoch: 1 });
    await adminA.replicaof('127.0.0.1', b.port);
    await untilInfo(adminA, 'replication', /master_link_status:up/);
    const err = await store
      .write('k', 'y', Buffer.from('1'), { expectedVersion: null, epoch: 1 })
      .catch((e: unknown) => e);
    expect(StateWriteRefusedError.is(err), String(err)).to.equal(true);
    const before = await connectionsReceived(adminA);
    await new Promise((r) => setTimeout(r, 6000));
    // Before: the refused identity check reconnected at once, again and again: 109 connections
    // in 6 s, a warning and an info line for each. Now 0.1 s doubling to 5 s: about 6.
    const dials = (await connectionsReceived(adminA)) - before;
    expect(dials, 'connections to the replica in 6 s').to.be.within(2, 8);
    expect(
      lines.length,
      `lines logged in 6 s: ${lines.map((l) => l.msg).join(' | ')}`,
    ).to.be.at.most(6);
    expect(lines.some((l) => /READONLY/.test(l.msg))).to.equal(true);

    // Primary again: writes go through at once (the pending dial is not waited for).
    await adminA.replicaof('NO', 'ONE');
    const until = Date.now() + 10_000;
    for (;;) {
      const done = await store
        .write('k', 'z', Buffer.from('1'), { expectedVersion: null, epoch: 1 })
        .then(
          () => true,
          (e: unknown) => {
            if (Date.now() > until) throw e;
            return false;
          },
        );
      if (done) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  });
});

import { recordingLogger, startRedis, type RedisHandle } from '@granary/testkit';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { ReplicaRedial } from '../../src/state/redis/replica-redial';
import { connectionsReceived, untilInfo } from './fixtures/redis-info';

/** Polls `check` every 50 ms until true, failing after `timeoutMs`. */
async function eventually(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const until = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const READONLY = new Error("READONLY You can't write against a read only replica.");

// A READONLY reply schedules a dial after a pause (0.1 s doubling to 5 s). By the time the pause
// ends the server may be the primary again: then a dial only drops the commands in flight.
describe('ReplicaRedial', function () {
  this.timeout(30_000);
  let a: RedisHandle;
  let b: RedisHandle;
  let admin: Redis;
  let client: Redis;
  let redial: ReplicaRedial;

  before(async () => {
    a = await startRedis();
    b = await startRedis();
    admin = new Redis(a.url);
  });
  after(async () => {
    admin?.disconnect();
    await b?.stop();
    await a?.stop();
  });
  beforeEach(async () => {
    redial = new ReplicaRedial(recordingLogger().logger, {}, () => 0.5);
    client = new Redis(a.url, { reconnectOnError: redial.onReplyError });
    redial.attach(client);
    await client.ping();
  });
  afterEach(async () => {
    redial.close();
    client.disconnect();
    await admin.replicaof('NO', 'ONE');
  });

  /** Schedules a dial as a READONLY reply does, and waits until its pause is surely over. */
  async function refusedAndPaused(): Promise<number> {
    const before = await connectionsReceived(admin);
    redial.onReplyError(READONLY);
    await new Promise((r) => setTimeout(r, 500));
    return before;
  }

  it('runs the in-place check, not a dial, when the server is a primary again', async () => {
    let checks = 0;
    redial.onPrimaryAgain(() => checks++);
    const before = await refusedAndPaused();
    await eventually(() => checks === 1, 'the in-place check ran');
    // The client kept its connection: the server accepted no new one.
    expect((await connectionsReceived(admin)) - before).to.equal(0);
    expect(client.status).to.equal('ready');
  });

  it('dials again when the server is still a replica', async () => {
    let checks = 0;
    redial.onPrimaryAgain(() => checks++);
    await admin.replicaof('127.0.0.1', b.port);
    await untilInfo(admin, 'replication', /master_link_status:up/);
    const before = await refusedAndPaused();
    await eventually(async () => (await connectionsReceived(admin)) > before, 'it dials again');
    expect(checks).to.equal(0);
  });

  it('dials again whatever the role without an in-place check (as a client shared by others)', async () => {
    const before = await refusedAndPaused();
    await eventually(async () => (await connectionsReceived(admin)) > before, 'it dials again');
  });
});

import { recordingLogger, startRedis, type RedisHandle } from '@granary/testkit';
import { expect } from 'chai';
import { RedisReminderStore } from '../../src/reminders/redis/redis-reminder-store';
import type { ReminderSpec } from '../../src/reminders/reminder-store';

const SPEC: ReminderSpec = {
  dueAt: 1_800_000_000_000,
  periodMs: 1000,
  catchUp: 'all',
  maxAttempts: 5,
  backoffMs: 1000,
};

async function waitFor(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// Redis with its append-only file (what the default durability 'restart' checks for) that comes
// back empty: a container restarted without its volume. Before, every reminder stopped firing
// and nothing was logged or counted (the fault run: 100 reminders, 0 fires after, no line).
describe('RedisReminderStore: a Redis that came back without its data is reported (real Redis)', function () {
  this.timeout(60_000);
  let redis: RedisHandle;
  const stores: RedisReminderStore[] = [];
  const newStore = (): { store: RedisReminderStore; lines: () => string[] } => {
    const rec = recordingLogger();
    const store = new RedisReminderStore({ url: redis.url, keyPrefix: 'loss:' });
    store.useLogger(rec.logger); // as Cluster.start hands it the member's logger
    stores.push(store);
    return { store, lines: () => rec.lines.filter((l) => l.level === 'error').map((l) => l.msg) };
  };

  beforeEach(async () => {
    redis = await startRedis();
  });
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    await redis?.stop();
  });

  it('logs the loss at error level once, counts it, and tells members started later until it is accepted', async () => {
    const a = newStore();
    await a.store.open();
    await a.store.put('beat', 3, 'g1', 'r', SPEC);
    expect(await a.store.loss.current()).to.equal(null);

    await redis.kill({ keepData: false });
    await redis.restart();
    // The check after the client's reconnection finds the marker gone.
    await waitFor('the loss reported', () => a.store.loss.lostStores === 1);
    expect(a.lines()).to.have.length(1);
    expect(a.lines()[0]).to.match(/reminder store lost its data/);
    expect(await a.store.load('beat', 3, 1)).to.deep.equal([]); // what was lost
    const loss = await a.store.loss.current();
    expect(loss).to.have.property('previousId').that.is.a('string').and.not.equal('');
    expect(a.store.loss.lostStores, 'logged once per loss, not per check').to.equal(1);

    // A member started after the loss learns of it from the marker.
    const b = newStore();
    await b.store.open();
    expect(b.store.loss.lostStores).to.equal(1);
    expect(b.lines()).to.have.length(1);

    expect(await b.store.loss.accept()).to.equal(true);
    expect(await a.store.loss.current()).to.equal(null);
    const c = newStore();
    await c.store.open();
    expect(c.store.loss.lostStores).to.equal(0);
    expect(c.lines()).to.deep.equal([]);
  });

  it('reports nothing when Redis restarts with its data', async () => {
    const a = newStore();
    await a.store.open();
    await a.store.put('beat', 3, 'g1', 'r', SPEC);
    await redis.kill({ keepData: true });
    await redis.restart();
    const loaded = await a.store.load('beat', 3, 1);
    expect(loaded.map((r) => r.id)).to.deep.equal(['g1']);
    expect(await a.store.loss.current()).to.equal(null);
    expect(a.store.loss.lostStores).to.equal(0);
    expect(a.lines()).to.deep.equal([]);
  });
});

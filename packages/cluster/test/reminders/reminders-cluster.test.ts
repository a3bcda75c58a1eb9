import { errorsOnlyLogger, startRedis, type RedisHandle } from '@granary/testkit';
import { expect } from 'chai';
import { InvalidArgumentError } from '@granary/core';
import { Cluster } from '../../src/cluster';
import type { Grain, GrainContext } from '../../src/grains/grain';
import type { ActivationEvent } from '../../src/grains/grains-options';
import { kind } from '../../src/grains/kind';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';
import { RedisReminderStore } from '../../src/reminders/redis/redis-reminder-store';
import {
  isReminderFire,
  type ReminderFire,
  type ReminderOptions,
} from '../../src/reminders/reminder';
import { waitForClusters } from '../cluster/converge';

/** Every fire any grain received: `${id}/${name}` → fires in arrival order. */
const fires = new Map<string, Array<ReminderFire & { member: string }>>();
/** Job attempts that must throw, per identity. */
const failFirst = new Map<string, number>();

class Sleeper implements Grain {
  async receive(ctx: GrainContext): Promise<unknown> {
    const m = ctx.message;
    if (isReminderFire(m)) {
      const key = `${ctx.identity}/${m.$reminder}`;
      const list = fires.get(key) ?? [];
      list.push({ ...m, member: ctx.cluster.id });
      fires.set(key, list);
      const left = failFirst.get(ctx.identity) ?? 0;
      if (m.job && left > 0) {
        failFirst.set(ctx.identity, left - 1);
        throw new Error(`attempt ${m.attempt} fails`);
      }
      return undefined;
    }
    const op = m as { set?: string; options?: ReminderOptions; del?: string; list?: boolean };
    if (op.set) return ctx.reminders.set(op.set, op.options!).then(() => 'ok');
    if (op.del) return ctx.reminders.delete(op.del);
    if (op.list) return (await ctx.reminders.list()).map((r) => r.name);
    return undefined;
  }
}

const SHARDS = 16;
const IDLE_MS = 80;

describe('reminders and jobs (in-process members, real Redis)', function () {
  this.timeout(60_000);
  let redis: RedisHandle;
  let table: MemoryClusterTable;
  const nodes: Cluster[] = [];
  const stores: RedisReminderStore[] = [];
  const log: ActivationEvent[] = [];

  async function addNode(): Promise<Cluster> {
    const store = new RedisReminderStore({ url: redis.url });
    stores.push(store);
    const c = await Cluster.start({
      name: 'reminders-test',
      id: `n${nodes.length + 1}-${Date.now() % 10000}`,
      provider: new MemoryProvider(table, { ttlMs: 1000 }),
      kinds: [kind('sleeper', () => new Sleeper(), { idleTimeoutMs: IDLE_MS, shardCount: SHARDS })],
      remote: { host: '127.0.0.1', port: 0 },
      claimRetryMs: 100,
      reminders: { store, deliveryTimeoutMs: 2000 },
      onActivation: (e) => log.push(e),
      logger: errorsOnlyLogger,
    });
    nodes.push(c);
    await converged();
    return c;
  }

  function converged(): Promise<void> {
    const live = nodes.filter((n) => n.self !== undefined);
    return waitForClusters(
      live,
      () => {
        for (let s = 0; s < SHARDS; s++) {
          if (live.filter((n) => n.canServe('sleeper', s)).length !== 1) return false;
        }
        return live.every((n) => n.topology.version === live[0]!.topology.version);
      },
      'every shard held once',
    );
  }

  /** Polls (fires arrive as grain turns; there is no event to wait on). */
  async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    const t0 = Date.now();
    while (!check()) {
      if (Date.now() - t0 > timeoutMs) throw new Error(`timed out: ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  const ticksOf = (key: string): number[] => (fires.get(key) ?? []).map((f) => f.tick);

  before(async () => {
    redis = await startRedis();
    table = new MemoryClusterTable();
    await addNode();
    await addNode();
  });
  after(async () => {
    await Promise.all(nodes.map((n) => n.shutdown({ graceful: false })));
    await Promise.all(stores.map((s) => s.close()));
    await redis?.stop();
  });
  beforeEach(() => {
    fires.clear();
    log.length = 0;
  });

  it('fires a reminder set by the grain every period; the grain passivates between fires', async () => {
    const [a] = nodes;
    await a!.request('sleeper', 'p1', {
      set: 'beat',
      options: { dueInMs: 100, periodMs: 300, catchUp: 'skip' },
    });
    await until(() => ticksOf('p1/beat').length >= 4, '4 fires');
    const got = fires.get('p1/beat')!.slice(0, 4);
    expect(got.map((f) => f.tick)).to.deep.equal([0, 1, 2, 3]);
    for (const f of got) {
      expect(f.dueAt).to.be.a('number');
      expect(f.firedAt - f.dueAt).to.be.within(0, 250);
      expect(f.skipped).to.equal(0);
      expect(f.job).to.equal(false);
    }
    // Each fire woke a passivated grain: as many activations as fires (the first from the set).
    const activations = log.filter((e) => e.identity === 'p1' && e.type === 'activate').length;
    const deactivations = log.filter((e) => e.identity === 'p1' && e.type === 'deactivate');
    expect(deactivations.length).to.be.greaterThanOrEqual(3);
    expect(deactivations.every((e) => e.reason === 'idle')).to.equal(true);
    expect(activations).to.be.greaterThanOrEqual(4);
    expect(await a!.request('sleeper', 'p1', { del: 'beat' })).to.equal(true);
    const n = ticksOf('p1/beat').length;
    await new Promise((r) => setTimeout(r, 700));
    expect(ticksOf('p1/beat').length).to.be.at.most(n + 1); // at most one in flight at delete
  });

  it('is set, listed and deleted from outside, on a member that does not own the grain', async () => {
    // An identity owned by the second member, driven from the first.
    const [a, b] = nodes;
    let id = 'o0';
    for (let i = 0; a!.canServe('sleeper', a!.shardOf('sleeper', id)); i++) id = `o${i}`;
    expect(b!.canServe('sleeper', b!.shardOf('sleeper', id))).to.equal(true);
    const handle = a!.reminders('sleeper', id);
    await handle.set('ext', { dueInMs: 50, periodMs: 200, catchUp: 'all', data: { v: 7 } });
    expect((await handle.list()).map((r) => r.name)).to.deep.equal(['ext']);
    await until(() => ticksOf(`${id}/ext`).length >= 2, '2 fires');
    expect(fires.get(`${id}/ext`)!.every((f) => f.member === b!.id)).to.equal(true);
    expect(fires.get(`${id}/ext`)![0]!.data).to.deep.equal({ v: 7 });
    expect(await handle.delete('ext')).to.equal(true);
    expect(await handle.list()).to.deep.equal([]);
    const n = ticksOf(`${id}/ext`).length;
    await new Promise((r) => setTimeout(r, 500));
    expect(ticksOf(`${id}/ext`).length).to.be.at.most(n + 1);
  });

  for (const [policy, expected] of [
    ['all', { first: [0, 1, 2, 3, 4, 5], skipped: 0 }],
    ['once', { first: [4, 5], skipped: 4 }],
    ['skip', { first: [5], skipped: 5 }],
  ] as const) {
    it(`catchUp '${policy}': ticks missed before the owner had it are ${policy === 'all' ? 'all fired' : 'reported'}`, async () => {
      // Due 5.5 periods ago: ticks 0..4 are missed, 5 is current.
      const id = `c-${policy}`;
      const period = 1000;
      await nodes[0]!.reminders('sleeper', id).set('late', {
        dueAt: Date.now() - 5.5 * period,
        periodMs: period,
        catchUp: policy,
      });
      await until(() => ticksOf(`${id}/late`).includes(5), 'tick 5 fired');
      const got = fires.get(`${id}/late`)!;
      expect(got.map((f) => f.tick)).to.deep.equal(expected.first);
      expect(got.reduce((n, f) => n + f.skipped, 0)).to.equal(expected.skipped);
      await nodes[0]!.reminders('sleeper', id).delete('late');
    });
  }

  it('retries a job while its turn throws, then records it done', async () => {
    failFirst.set('j1', 2);
    await nodes[0]!.reminders('sleeper', 'j1').set('once', { dueInMs: 20, backoffMs: 50 });
    const h = nodes[1]!.reminders('sleeper', 'j1');
    await until(() => ticksOf('j1/once').length === 3, '3 attempts');
    let outcome;
    for (let i = 0; i < 100 && !(outcome = await h.outcome('once')); i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(outcome).to.include({ status: 'done', attempts: 3 });
    expect(fires.get('j1/once')!.map((f) => f.attempt)).to.deep.equal([1, 2, 3]);
    expect(await h.list()).to.deep.equal([]);
  });

  it('gives up a job after maxAttempts and records the failure', async () => {
    failFirst.set('j2', 10);
    const h = nodes[0]!.reminders('sleeper', 'j2');
    await h.set('doomed', { dueInMs: 10, backoffMs: 20, maxAttempts: 2 });
    let outcome;
    for (let i = 0; i < 200 && !(outcome = await h.outcome('doomed')); i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(outcome).to.include({ status: 'failed', attempts: 2, error: 'attempt 2 fails' });
    expect(ticksOf('j2/doomed')).to.have.length(2);
  });

  it('refuses a period under 100 ms and a periodic reminder without catchUp', async () => {
    const h = nodes[0]!.reminders('sleeper', 'bad');
    const e1 = await h.set('x', { dueInMs: 1, periodMs: 50, catchUp: 'all' }).catch((e) => e);
    expect((e1 as Error).message).to.match(/periodMs/);
    const e2 = await h.set('x', { dueInMs: 1, periodMs: 100 }).catch((e) => e);
    expect((e2 as Error).message).to.match(/catchUp/);
  });

  it('refuses a reminder name that is empty, over 1 KiB or holds a lone surrogate', async () => {
    const h = nodes[0]!.reminders('sleeper', 'names');
    for (const name of ['', 'n'.repeat(2000), 'tick-\ud800']) {
      const err = await h.set(name, { dueInMs: 60_000 }).catch((e: unknown) => e);
      expect(err, `${name.length} chars`).to.be.instanceOf(InvalidArgumentError);
      expect((err as InvalidArgumentError).argument).to.equal('name');
    }
    expect(await h.list()).to.deep.equal([]);
  });

  it('refuses the reminders of an identity no call may name (empty, over 1 KiB, a lone surrogate)', () => {
    for (const identity of ['', 'x'.repeat(2000), '\ud800']) {
      expect(() => nodes[0]!.reminders('sleeper', identity), `${identity.length} chars`)
        .to.throw(InvalidArgumentError)
        .with.property('argument', 'identity');
    }
  });

  it('moves with its shard on a join: no tick twice, none lost (catchUp all)', async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `m${i}`);
    await Promise.all(
      ids.map((id) =>
        nodes[0]!
          .reminders('sleeper', id)
          .set('mv', { dueInMs: 50, periodMs: 200, catchUp: 'all' }),
      ),
    );
    await until(() => ids.every((id) => ticksOf(`${id}/mv`).length >= 2), 'all fired twice');
    const c = await addNode();
    await new Promise((r) => setTimeout(r, 1000));
    await Promise.all(ids.map((id) => nodes[0]!.reminders('sleeper', id).delete('mv')));
    await new Promise((r) => setTimeout(r, 300));
    let moved = 0;
    for (const id of ids) {
      const got = fires.get(`${id}/mv`)!;
      const ticks = got.map((f) => f.tick).sort((x, y) => x - y);
      expect(ticks, id).to.deep.equal(ticks.map((_, i) => i)); // 0..n-1: none twice, none lost
      if (got.some((f) => f.member === c.id)) moved++;
    }
    expect(moved).to.be.greaterThan(0);
  });
});

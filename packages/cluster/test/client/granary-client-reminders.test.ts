import { expect } from 'chai';
import { ActorSystem, InvalidArgumentError, PID, Remote, silentLogger } from '@granary/core';
import { errorsOnlyLogger, freePort, startRedis, type RedisHandle } from '@granary/testkit';
import { GranaryClient } from '../../src/client/granary-client';
import { Cluster } from '../../src/cluster';
import { ClusterStoppedError } from '../../src/errors';
import type { Grain, GrainContext } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';
import { RemindersBusyError, RemindersNotConfiguredError } from '../../src/reminders/errors';
import {
  MAX_REMINDER_OPS_IN_FLIGHT,
  REMINDER_OPS_ACTOR,
} from '../../src/reminders/internal/reminder-ops';
import { MemoryReminderStore } from '../../src/reminders/memory/memory-reminder-store';
import { RedisReminderStore } from '../../src/reminders/redis/redis-reminder-store';
import { isReminderFire, type ReminderFire } from '../../src/reminders/reminder';

const SECRET = 'a-secret-of-at-least-16-bytes';
const SHARDS = 8;

/** Fires received, by `identity/name`, with the member that ran them. */
const fires = new Map<string, Array<ReminderFire & { member: string }>>();

class Invoice implements Grain {
  receive(ctx: GrainContext): unknown {
    const m = ctx.message;
    if (!isReminderFire(m)) return 'plain';
    const key = `${ctx.identity}/${m.$reminder}`;
    fires.set(key, [...(fires.get(key) ?? []), { ...m, member: ctx.cluster.id }]);
    return null;
  }
}

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 10_000) {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('GranaryClient.reminders (a client that is not a member)', function () {
  this.timeout(60_000);
  let redis: RedisHandle;
  const table = new MemoryClusterTable();
  const members: Cluster[] = [];
  const stores: RedisReminderStore[] = [];
  let client: GranaryClient;

  async function member(id: string): Promise<Cluster> {
    const store = new RedisReminderStore({ url: redis.url });
    stores.push(store);
    const c = await Cluster.start({
      name: 'billing',
      id,
      provider: new MemoryProvider(table, { ttlMs: 1000 }),
      kinds: [kind('invoice', () => new Invoice(), { shardCount: SHARDS, idleTimeoutMs: 200 })],
      remote: { host: '127.0.0.1', port: await freePort(), secret: SECRET },
      reminders: { store },
      requestTimeoutMs: 3000,
      logger: errorsOnlyLogger,
    });
    members.push(c);
    return c;
  }

  before(async () => {
    redis = await startRedis();
    await member('m1');
    await member('m2');
    client = await GranaryClient.connect({
      name: 'billing',
      gateways: [members[0]!.address],
      secret: SECRET,
      topologyRefreshMs: 200,
      requestTimeoutMs: 4000,
    });
    await until('the client to see both members', () => client.topology.members.length === 2);
  });
  after(async () => {
    await client?.close();
    await Promise.all(members.map((m) => m.shutdown({ graceful: false })));
    await Promise.all(stores.map((s) => s.close()));
    await redis?.stop();
  });

  it('sets a job that fires on the grain owner, and reads its outcome and list', async () => {
    const r = client.reminders('invoice', 'inv-1');
    await r.set('send', { dueInMs: 100, data: { to: 'alice' } });
    await until('the job to fire', () => fires.has('inv-1/send'));
    const fire = fires.get('inv-1/send')![0]!;
    const owner = members[0]!.ownerOf('invoice', members[0]!.shardOf('invoice', 'inv-1'));
    expect(fire).to.include({ job: true, attempt: 1, member: owner!.id });
    expect(fire.data).to.deep.equal({ to: 'alice' });
    await until('the outcome', async () => (await r.outcome('send')) !== undefined);
    expect(await r.outcome('send')).to.include({ status: 'done', attempts: 1 });
    expect(await r.outcome('never-set')).to.equal(undefined);
  });

  it('sets, lists and deletes a periodic reminder as a member would', async () => {
    const r = client.reminders('invoice', 'inv-2');
    await r.set('dunning', { dueInMs: 50, periodMs: 150, catchUp: 'skip', data: 3 });
    expect((await r.list()).map((i) => [i.name, i.periodMs, i.catchUp, i.data])).to.deep.equal([
      ['dunning', 150, 'skip', 3],
    ]);
    // What the client set, a member sees (the same store, the same grain).
    const seen = await members[1]!.reminders('invoice', 'inv-2').list();
    expect(seen.map((i) => i.name)).to.deep.equal(['dunning']);
    await until('two ticks', () => (fires.get('inv-2/dunning')?.length ?? 0) >= 2);
    expect(await r.delete('dunning')).to.equal(true);
    expect(await r.delete('dunning')).to.equal(false);
    expect(await r.list()).to.deep.equal([]);
    const after = fires.get('inv-2/dunning')!.length;
    await new Promise((resolve) => setTimeout(resolve, 400));
    // At most one fire already claimed when the delete reached the owner.
    expect(fires.get('inv-2/dunning')!.length).to.be.at.most(after + 1);
  });

  it('refuses bad arguments at once, typed, naming them (nothing sent)', async () => {
    const r = client.reminders('invoice', 'inv-3');
    const err = await r.set('x', { dueInMs: 10, period: 1000 } as never).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(InvalidArgumentError);
    expect((err as InvalidArgumentError).argument).to.equal('period');
    const noCatchUp = await r.set('x', { dueInMs: 10, periodMs: 1000 }).catch((e: unknown) => e);
    expect((noCatchUp as InvalidArgumentError).argument).to.equal('catchUp');
    const badName = await r.delete('').catch((e: unknown) => e);
    expect((badName as InvalidArgumentError).argument).to.equal('name');
    expect(() => client.reminders('invoice', '')).to.throw(InvalidArgumentError);
    expect(() => client.reminders('', 'inv-3')).to.throw(InvalidArgumentError);
    expect(await r.list()).to.deep.equal([]);
  });

  it('runs the operation on another member when the one it asked is gone', async () => {
    // A third member that the client will see as the owner of some grain, then killed.
    const m3 = await member('m3');
    await until('the client to see m3', () => client.topology.members.length === 3);
    let id = '';
    for (let i = 0; id === ''; i++) {
      const o = m3.ownerOf('invoice', m3.shardOf('invoice', `moved-${i}`));
      if (o?.id === 'm3') id = `moved-${i}`;
    }
    // Stopped without leaving: the client's topology still names it until its TTL passes.
    await m3.shutdown({ graceful: false });
    await client.reminders('invoice', id).set('later', { dueInMs: 100 });
    await until('the job to fire on a survivor', () => fires.has(`${id}/later`), 15_000);
    expect(['m1', 'm2']).to.include(fires.get(`${id}/later`)![0]!.member);
  });

  it('fails with ClusterStoppedError once the client is closed', async () => {
    const other = await GranaryClient.connect({
      name: 'billing',
      gateways: [members[0]!.address],
      secret: SECRET,
    });
    const r = other.reminders('invoice', 'inv-4');
    await other.close();
    expect(await r.list().catch((e: unknown) => e)).to.be.instanceOf(ClusterStoppedError);
    expect(() => other.reminders('invoice', 'inv-4')).to.throw(ClusterStoppedError);
  });
});

describe('GranaryClient.reminders against members without reminders', function () {
  this.timeout(30_000);
  let cluster: Cluster;
  let client: GranaryClient;
  before(async () => {
    cluster = await Cluster.start({
      name: 'plain',
      id: 'p1',
      provider: new MemoryProvider(new MemoryClusterTable()),
      kinds: [kind('invoice', () => new Invoice(), { shardCount: SHARDS })],
      remote: { host: '127.0.0.1', port: 0 },
      logger: errorsOnlyLogger,
    });
    client = await GranaryClient.connect({
      name: 'plain',
      gateways: [cluster.address],
      requestTimeoutMs: 2000,
    });
  });
  after(async () => {
    await client?.close();
    await cluster?.shutdown({ graceful: false });
  });

  it("gets the member's RemindersNotConfiguredError, typed, without retrying to the deadline", async () => {
    const started = Date.now();
    const err = await client
      .reminders('invoice', 'i')
      .list()
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RemindersNotConfiguredError);
    expect(Date.now() - started).to.be.below(1500);
  });
});

describe('the $reminder-ops actor at the trust boundary', function () {
  this.timeout(30_000);
  let cluster: Cluster;
  let peer: ActorSystem;
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));

  before(async () => {
    const store = new MemoryReminderStore();
    const list = store.list.bind(store);
    // Holds every list() until released: the operations stay in flight.
    store.list = async (...args: Parameters<typeof store.list>) => {
      await gate;
      return list(...args);
    };
    cluster = await Cluster.start({
      name: 'bounded',
      id: 'b1',
      provider: new MemoryProvider(new MemoryClusterTable()),
      kinds: [kind('invoice', () => new Invoice(), { shardCount: SHARDS })],
      remote: { host: '127.0.0.1', port: 0 },
      reminders: { store },
      logger: errorsOnlyLogger,
    });
    peer = new ActorSystem({ logger: silentLogger });
    await new Remote(peer).start({ host: '127.0.0.1', port: 0, clusterName: 'bounded' });
  });
  after(async () => {
    release();
    await peer?.shutdown();
    await cluster?.shutdown({ graceful: false });
  });

  it('answers a malformed operation with InvalidArgumentError naming the field', async () => {
    const target = new PID(cluster.address, REMINDER_OPS_ACTOR);
    const ask = (m: unknown) => peer.root.request(target, m, { timeoutMs: 5000 }).catch((e) => e);
    const noKind = await ask({ $reminderOp: 'list', kind: '', id: 'x' });
    expect((noKind as InvalidArgumentError).argument).to.equal('kind');
    const op = await ask({ $reminderOp: 'drop', kind: 'invoice', id: 'x' });
    expect((op as InvalidArgumentError).argument).to.equal('op');
    const id = await ask({ $reminderOp: 'list', kind: 'invoice', id: 7 });
    expect((id as InvalidArgumentError).argument).to.equal('identity');
    const opts = await ask({ $reminderOp: 'set', kind: 'invoice', id: 'x', name: 'n' });
    expect((opts as InvalidArgumentError).argument).to.equal('options');
  });

  it(`runs at most ${MAX_REMINDER_OPS_IN_FLIGHT} at once and refuses the rest with RemindersBusyError`, async () => {
    const target = new PID(cluster.address, REMINDER_OPS_ACTOR);
    const n = MAX_REMINDER_OPS_IN_FLIGHT + 40;
    const answers = Array.from({ length: n }, (_, i) =>
      peer.root
        .request(
          target,
          { $reminderOp: 'list', kind: 'invoice', id: `g${i}` },
          { timeoutMs: 10_000 },
        )
        .catch((e: unknown) => e),
    );
    const refused = await Promise.all(answers.slice(MAX_REMINDER_OPS_IN_FLIGHT));
    for (const e of refused) expect(e).to.be.instanceOf(RemindersBusyError);
    release();
    const ran = await Promise.all(answers.slice(0, MAX_REMINDER_OPS_IN_FLIGHT));
    for (const r of ran) expect(r).to.deep.equal([]);
    // The bound is freed again once they are answered.
    expect(
      await peer.root.request(
        target,
        { $reminderOp: 'list', kind: 'invoice', id: 'after' },
        {
          timeoutMs: 5000,
        },
      ),
    ).to.deep.equal([]);
  });
});

import { expect } from 'chai';
import { ActorSystem, silentLogger, type Actor, type Context, type PID } from '@granary/core';
import { spawnPool } from '../src/pool';
import { consistentHash } from '../src/pool-strategy';
import { inspectPool, requestUrgent } from '../src/urgent-requests';
import { behavior, gate, Recorder, tick, type Seen } from './pool-support';

/** Answers at once, except `'block'`, which holds the worker until the gate opens. */
class Blocker implements Actor {
  constructor(
    private readonly log: Seen[],
    private readonly hold: Promise<void>,
  ) {}

  receive(ctx: Context): void | Promise<void> {
    const m = ctx.message;
    if (typeof m !== 'string') return;
    this.log.push({ worker: ctx.self.id, message: m, sender: ctx.sender, headers: {}, args: 0 });
    ctx.respond(ctx.self.id);
    if (m === 'block') return this.hold;
  }
}

describe('Pool strategies', () => {
  let system: ActorSystem;
  beforeEach(() => {
    system = new ActorSystem({ logger: silentLogger });
  });
  afterEach(() => system.shutdown());

  const workersOf = (pool: PID) => requestUrgent<PID[]>(system.root, pool, 'workers');

  it('least-busy: sends to an idle worker while others are still busy', async () => {
    const hold = gate();
    const log: Seen[] = [];
    const pool = spawnPool(
      system.root,
      behavior({
        poolSize: 3,
        strategy: 'least-busy',
        workerProps: () => new Blocker(log, hold.promise),
      }),
    );
    const [w0, w1, w2] = (await workersOf(pool)).map((p) => p.id);
    const blocked = [system.root.request(pool, 'block'), system.root.request(pool, 'block')];
    expect(await system.root.request(pool, 'quick')).to.equal(w2);
    // Round-robin would now pick w0; w0 and w1 are still busy, so least-busy picks w2 again.
    expect(await system.root.request(pool, 'quick')).to.equal(w2);
    expect(await Promise.all(blocked)).to.deep.equal([w0, w1]);
    hold.open();
    expect((await inspectPool(system.root, pool)).strategy).to.equal('least-busy');
  });

  it('random: spreads messages over every worker', async () => {
    const log: Seen[] = [];
    const pool = spawnPool(
      system.root,
      behavior({ poolSize: 4, strategy: 'random', workerProps: () => new Recorder(log) }),
    );
    await Promise.all(Array.from({ length: 200 }, (_, i) => system.root.request(pool, i)));
    const perWorker = new Map<string, number>();
    for (const s of log) perWorker.set(s.worker, (perWorker.get(s.worker) ?? 0) + 1);
    expect(perWorker.size).to.equal(4);
    for (const n of perWorker.values()) expect(n).to.be.greaterThan(10);
  });

  it('consistent-hash: one key always reaches the same worker, also after it was replaced', async () => {
    const log: Seen[] = [];
    const pool = spawnPool(
      system.root,
      behavior({
        poolSize: 4,
        strategy: consistentHash((m) => (m as { user: string }).user),
        workerProps: () => new Recorder(log),
      }),
    );
    const ask = (user: string) =>
      system.root.request<{ worker: string }>(pool, { user }).then((r) => r.worker);
    const owner = new Map<string, string>();
    for (let u = 0; u < 40; u++) owner.set(`u${u}`, await ask(`u${u}`));
    for (let u = 0; u < 40; u++) expect(await ask(`u${u}`)).to.equal(owner.get(`u${u}`));
    expect(new Set(owner.values()).size).to.be.greaterThan(1);

    const workers = await workersOf(pool);
    const victim = owner.get('u0')!;
    const gone = system.root.watch(workers.find((p) => p.id === victim)!);
    system.root.stop(workers.find((p) => p.id === victim)!);
    await gone;
    const replacement = await ask('u0');
    expect(replacement).to.not.equal(victim);
    for (const [user, worker] of owner) {
      if (worker === victim) expect(await ask(user)).to.equal(replacement);
      else expect(await ask(user)).to.equal(worker);
    }
  });

  it('broadcast: every worker gets every message with the original sender', async () => {
    const log: Seen[] = [];
    const pool = spawnPool(
      system.root,
      behavior({ poolSize: 3, strategy: 'broadcast', workerProps: () => new Recorder(log) }),
    );
    system.root.send(pool, 'config-changed');
    const first = await system.root.request<{ worker: string }>(pool, 'ping');
    for (let i = 0; i < 100 && log.length < 6; i++) await tick();
    expect(log.filter((s) => s.message === 'config-changed')).to.have.length(3);
    expect(new Set(log.filter((s) => s.message === 'ping').map((s) => s.worker)).size).to.equal(3);
    expect(log.map((s) => s.worker)).to.include(first.worker);
    expect((await inspectPool(system.root, pool)).messages_forwarded).to.equal(6);
  });
});

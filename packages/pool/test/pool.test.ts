import { expect } from 'chai';
import {
  ActorSystem,
  InvalidOptionError,
  NameExistsError,
  Props,
  silentLogger,
  type Context,
  type PID,
} from '@granary/core';
import { PoolSaturatedError } from '../src/errors';
import { spawnPool } from '../src/pool';
import { inspectPool, requestUrgent } from '../src/urgent-requests';
import { behavior, deadLetters, gate, Recorder, rejection, until, type Seen } from './pool-support';

describe('Pool', () => {
  let system: ActorSystem;
  beforeEach(() => {
    system = new ActorSystem({ logger: silentLogger });
  });
  afterEach(() => system.shutdown());

  const workersOf = (pool: PID) => requestUrgent<PID[]>(system.root, pool, 'workers');

  describe('init', () => {
    it('needs only init: spawns poolSize workers at start', async () => {
      const log: Seen[] = [];
      const pool = spawnPool(system.root, () => ({
        init: () => ({ poolSize: 4, workerProps: () => new Recorder(log) }),
      }));
      const stats = await inspectPool(system.root, pool);
      expect(stats).to.include({
        pool_size: 4,
        worker_behavior: 'Recorder',
        worker_mailbox_size: Infinity,
        worker_restarts: 0,
        messages_forwarded: 0,
        messages_unhandled: 0,
        strategy: 'round-robin',
        state: 'running',
      });
    });

    it("keeps a request's deadline, also when it waits for the workers to start", async () => {
      const seen: Array<number | undefined> = [];
      const pool = spawnPool(
        system.root,
        behavior({
          poolSize: 2,
          workerProps: Props.fromFunc((ctx: Context) => {
            if (ctx.message !== 'q') return;
            seen.push(ctx.deadline);
            ctx.respond('ok');
          }),
        }),
      );
      const before = Date.now();
      // The first is sent while the pool starts (it waits as a pending message), the second after.
      await system.root.request(pool, 'q', { timeoutMs: 5_000 });
      await system.root.request(pool, 'q', { timeoutMs: 5_000 });
      expect(seen).to.have.length(2);
      for (const d of seen) expect(d).to.be.within(before + 5_000, Date.now() + 5_000);
    });

    it('passes workerArgs to the factory of every worker', async () => {
      const log: Seen[] = [];
      const pool = spawnPool(
        system.root,
        behavior({
          poolSize: 2,
          workerArgs: { region: 'eu' },
          workerProps: (args) => new Recorder(log, args),
        }),
      );
      await system.root.request(pool, 'a');
      await system.root.request(pool, 'b');
      expect(log.map((s) => s.args)).to.deep.equal([{ region: 'eu' }, { region: 'eu' }]);
    });

    it('throws InvalidOptionError naming the option for a bad poolSize', () => {
      expect(() =>
        spawnPool(system.root, behavior({ poolSize: 0, workerProps: () => new Recorder([]) })),
      )
        .to.throw(InvalidOptionError)
        .with.property('option', 'poolSize');
    });

    it('throws what init throws, and registers nothing', () => {
      const before = system.registry.size;
      expect(() =>
        spawnPool(system.root, () => ({
          init: () => {
            throw new Error('no config');
          },
        })),
      ).to.throw('no config');
      expect(system.registry.size).to.equal(before);
    });

    it('refuses a taken name with NameExistsError', () => {
      const opts = behavior({ workerProps: () => new Recorder([]) });
      spawnPool(system.root, opts, undefined, { name: 'resizers' });
      expect(() => spawnPool(system.root, opts, undefined, { name: 'resizers' })).to.throw(
        NameExistsError,
      );
    });
  });

  describe('forwarding', () => {
    it("keeps the original sender: a worker's reply goes straight to the sending actor", async () => {
      const log: Seen[] = [];
      const pool = spawnPool(system.root, behavior({ workerProps: () => new Recorder(log) }));
      const replies: unknown[] = [];
      const asker = system.root.spawn(
        Props.fromFunc((ctx: Context) => {
          if (ctx.message === 'go')
            ctx.send(pool, 'hello', { sender: ctx.self, header: { t: '1' } });
          else if (typeof ctx.message === 'object' && ctx.message?.constructor === Object) {
            replies.push(ctx.message);
          }
        }),
      );
      system.root.send(asker, 'go');
      await until(() => replies.length === 1);
      expect(log[0]!.sender!.equals(asker)).to.equal(true);
      expect(log[0]!.headers).to.deep.equal({ t: '1' });
      expect(replies[0]).to.deep.include({ message: 'hello' });
    });

    it("forwards requests: the worker answers the caller's future, not the pool", async () => {
      const log: Seen[] = [];
      const pool = spawnPool(system.root, behavior({ workerProps: () => new Recorder(log) }));
      const reply = await system.root.request<{ worker: string }>(pool, 'work', {
        timeoutMs: 10_000,
      });
      expect(log[0]!.sender!.id).to.match(/^f\$/);
      expect(reply.worker).to.equal(log[0]!.worker);
      expect(reply.worker).to.not.equal(pool.id);
    });

    it('round-robin: takes workers in FIFO order, each goes back to the tail', async () => {
      const log: Seen[] = [];
      const pool = spawnPool(
        system.root,
        behavior({ poolSize: 3, workerProps: () => new Recorder(log) }),
      );
      const workers = (await workersOf(pool)).map((p) => p.id);
      for (let i = 0; i < 6; i++) system.root.send(pool, `m${i}`);
      await until(() => log.length === 6);
      const byMessage = Object.fromEntries(log.map((s) => [s.message, s.worker]));
      expect([0, 1, 2, 3, 4, 5].map((i) => byMessage[`m${i}`])).to.deep.equal([
        ...workers,
        ...workers,
      ]);
      expect((await inspectPool(system.root, pool)).messages_forwarded).to.equal(6);
    });

    it('skips a worker whose mailbox is full and forwards to the next one', async () => {
      const log: Seen[] = [];
      const pool = spawnPool(
        system.root,
        behavior({ poolSize: 2, workerMailboxSize: 1, workerProps: () => new Recorder(log) }),
      );
      const [w0, w1] = await workersOf(pool);
      system.root.send(w0!, 'filler'); // w0's one slot is taken
      system.root.send(pool, 'work'); // round-robin would pick w0 first
      await until(() => log.length === 2);
      expect(log.find((s) => s.message === 'work')!.worker).to.equal(w1!.id);
      expect(await inspectPool(system.root, pool)).to.include({
        messages_forwarded: 1,
        messages_unhandled: 0,
      });
    });

    it('rejects a request at once with PoolSaturatedError when every worker is full', async () => {
      const hold = gate();
      const log: Seen[] = [];
      const pool = spawnPool(
        system.root,
        behavior({
          poolSize: 2,
          workerMailboxSize: 1,
          workerProps: () => new Recorder(log, undefined, hold.promise),
        }),
      );
      await workersOf(pool); // started
      const accepted = [system.root.request(pool, 1), system.root.request(pool, 2)];
      const err = await rejection(system.root.request(pool, 3));
      expect(err).to.be.instanceOf(PoolSaturatedError);
      expect(err).to.include({ code: 'ERR_POOL_SATURATED', tried: 2, workerMailboxSize: 1 });
      hold.open();
      expect(await Promise.all(accepted)).to.have.length(2);
      expect((await inspectPool(system.root, pool)).messages_unhandled).to.equal(1);
    });

    it('dead-letters a plain send when every worker is full and counts it as unhandled', async () => {
      const hold = gate();
      const dead = deadLetters(system, 'pool-saturated');
      const log: Seen[] = [];
      const pool = spawnPool(
        system.root,
        behavior({
          poolSize: 2,
          workerMailboxSize: 3,
          workerProps: () => new Recorder(log, undefined, hold.promise),
        }),
      );
      await workersOf(pool);
      for (let i = 0; i < 10; i++) system.root.send(pool, i);
      // The pool keeps nothing itself: poolSize × workerMailboxSize = 6 accepted, 4 refused.
      expect(dead.map((d) => d.message)).to.deep.equal([6, 7, 8, 9]);
      expect(dead[0]!.pid.equals(pool)).to.equal(true);
      hold.open();
      await until(() => log.length === 6);
      expect(await inspectPool(system.root, pool)).to.include({
        messages_forwarded: 6,
        messages_unhandled: 4,
      });
    });
  });

  describe('worker restarts', () => {
    it('replaces a crashed worker with a fresh one from the same factory and args', async () => {
      const log: Seen[] = [];
      let made = 0;
      const pool = spawnPool(
        system.root,
        behavior({
          poolSize: 1,
          workerArgs: 'cfg',
          workerProps: (args) => (made++, new Recorder(log, args)),
        }),
      );
      const [first] = await workersOf(pool);
      const gone = system.root.watch(first!);
      system.root.send(pool, 'crash');
      expect((await gone).why).to.equal('failed');
      const reply = await system.root.request<{ worker: string }>(pool, 'after', {
        timeoutMs: 10_000,
      });
      expect(reply.worker).to.not.equal(first!.id);
      expect(made).to.equal(2);
      expect(log.map((s) => s.args)).to.deep.equal(['cfg']);
      expect((await inspectPool(system.root, pool)).worker_restarts).to.equal(1);
    });

    it('skips a dead worker whose replacement cannot be made, without throwing into the sender', async () => {
      const log: Seen[] = [];
      let made = 0;
      const pool = spawnPool(
        system.root,
        behavior({
          poolSize: 2,
          workerProps: () => {
            if (++made > 2) throw new Error('out of licences');
            return new Recorder(log);
          },
        }),
      );
      const [w0, w1] = await workersOf(pool);
      const gone = system.root.watch(w0!);
      system.root.stop(w0!);
      await gone;
      const reply = await system.root.request<{ worker: string }>(pool, 'x', { timeoutMs: 10_000 });
      expect(reply.worker).to.equal(w1!.id);
      expect((await inspectPool(system.root, pool)).worker_restarts).to.equal(0);
    });

    it('forwards a message sent right after a worker died to its replacement', async () => {
      const log: Seen[] = [];
      const pool = spawnPool(
        system.root,
        behavior({ poolSize: 1, workerProps: () => new Recorder(log) }),
      );
      const [first] = await workersOf(pool);
      const gone = system.root.watch(first!);
      system.root.stop(first!);
      await gone;
      const reply = await system.root.request<{ worker: string }>(pool, 'x', { timeoutMs: 10_000 });
      expect(reply.worker).to.not.equal(first!.id);
      const stats = await inspectPool(system.root, pool);
      expect(stats).to.include({ pool_size: 1, worker_restarts: 1, messages_unhandled: 0 });
    });
  });

  describe('before the workers exist', () => {
    it('forwards messages sent right after spawnPool once the workers started', async () => {
      const log: Seen[] = [];
      const pool = spawnPool(system.root, behavior({ workerProps: () => new Recorder(log) }));
      const reply = system.root.request(pool, 'early', { timeoutMs: 10_000 });
      expect(await reply).to.deep.include({ message: 'early' });
    });

    it('gives an urgent message sent right after spawnPool to handleMessage once started', async () => {
      const got: unknown[] = [];
      const log: Seen[] = [];
      const pool = spawnPool(
        system.root,
        behavior(
          { workerProps: () => new Recorder(log) },
          { handleMessage: (p, msg) => void got.push([msg, p.workers.length]) },
        ),
      );
      system.root.send(pool, 'early-admin', { priority: 'urgent' });
      await until(() => got.length === 1);
      expect(got).to.deep.equal([['early-admin', 3]]);
      expect(log).to.have.length(0);
    });
  });
});

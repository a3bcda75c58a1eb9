import { expect } from 'chai';
import {
  ActorSystem,
  DeadLetterError,
  InvalidArgumentError,
  Props,
  silentLogger,
  type PID,
  type Supervisor,
  type SupervisorStrategy,
} from '@granary/core';
import { PoolStateError, PoolUnhandledRequestError } from '../src/errors';
import { spawnPool } from '../src/pool';
import type { PoolContext } from '../src/pool-behavior';
import { inspectPool, requestUrgent } from '../src/urgent-requests';
import { behavior, gate, Recorder, rejection, tick, until, type Seen } from './pool-support';

describe('Pool management', () => {
  let system: ActorSystem;
  beforeEach(() => {
    system = new ActorSystem({ logger: silentLogger });
  });
  afterEach(() => system.shutdown());

  const workersOf = (pool: PID) => requestUrgent<PID[]>(system.root, pool, 'workers');

  describe('urgent lane', () => {
    it('gives urgent messages to handleMessage and never to a worker', async () => {
      const log: Seen[] = [];
      const got: unknown[] = [];
      const pool = spawnPool(
        system.root,
        behavior(
          { workerProps: () => new Recorder(log) },
          { handleMessage: (_pool, msg) => void got.push(msg) },
        ),
      );
      system.root.send(pool, 'scale-up', { priority: 'urgent' });
      await until(() => got.length === 1);
      expect(got).to.deep.equal(['scale-up']);
      await system.root.request(pool, 'normal');
      expect(log.map((s) => s.message)).to.deep.equal(['normal']);
    });

    it('answers urgent requests from handleCall', async () => {
      const pool = spawnPool(
        system.root,
        behavior(
          { workerProps: () => new Recorder([]) },
          { handleCall: (pool, req) => (req === 'size' ? pool.workers.length : undefined) },
        ),
      );
      expect(await requestUrgent(system.root, pool, 'size', { timeoutMs: 10_000 })).to.equal(3);
    });

    it('rejects an urgent request handleCall does not answer with PoolUnhandledRequestError', async () => {
      const log: Seen[] = [];
      const pool = spawnPool(system.root, () => ({
        init: () => ({ workerProps: () => new Recorder(log) }),
      }));
      const err = await rejection(requestUrgent(system.root, pool, { op: 'stats' }));
      expect(err).to.be.instanceOf(PoolUnhandledRequestError);
      expect(err).to.include({ code: 'ERR_POOL_UNHANDLED_REQUEST' });
      expect(log).to.have.length(0);
    });

    it('rejects the caller with the error handleCall throws', async () => {
      const pool = spawnPool(
        system.root,
        behavior(
          { workerProps: () => new Recorder([]) },
          {
            handleCall: () => {
              throw new RangeError('bad op');
            },
          },
        ),
      );
      const err = await rejection(requestUrgent(system.root, pool, 'op'));
      expect(err).to.be.instanceOf(RangeError);
    });
  });

  describe('addWorkers / removeWorkers', () => {
    it('addWorkers spawns workers that take work at once and returns the new size', async () => {
      const log: Seen[] = [];
      const pool = spawnPool(
        system.root,
        behavior(
          { poolSize: 1, workerProps: () => new Recorder(log) },
          { handleCall: (p, req) => (req === 'add' ? p.addWorkers(2) : undefined) },
        ),
      );
      expect(await requestUrgent(system.root, pool, 'add')).to.equal(3);
      for (let i = 0; i < 3; i++) await system.root.request(pool, i);
      expect(new Set(log.map((s) => s.worker)).size).to.equal(3);
    });

    it('removeWorkers lets a removed worker finish its queue, then stops it', async () => {
      const hold = gate();
      const log: Seen[] = [];
      const pool = spawnPool(
        system.root,
        behavior(
          { poolSize: 2, workerProps: () => new Recorder(log, undefined, hold.promise) },
          {
            handleCall: (p, req) =>
              req === 'workers'
                ? [...p.workers]
                : req === 'remove'
                  ? p.removeWorkers(1)
                  : undefined,
          },
        ),
      );
      const [, w1] = await workersOf(pool);
      const queued = [1, 2, 3, 4].map((i) => system.root.request(pool, i));
      expect(await requestUrgent(system.root, pool, 'remove')).to.equal(1);
      const gone = system.root.watch(w1!);
      hold.open();
      const replies = await Promise.all(queued);
      expect(replies).to.have.length(4);
      expect((await gone).why).to.equal('stopped');
      expect(log.filter((s) => s.worker === w1!.id)).to.have.length(2);
      await system.root.request(pool, 'after');
      expect(log.at(-1)!.worker).to.not.equal(w1!.id);
      expect((await inspectPool(system.root, pool)).pool_size).to.equal(1);
    });

    it('refuses to remove the last worker with InvalidArgumentError', async () => {
      const pool = spawnPool(
        system.root,
        behavior(
          { poolSize: 2, workerProps: () => new Recorder([]) },
          { handleCall: (p) => p.removeWorkers(2) },
        ),
      );
      expect(await rejection(requestUrgent(system.root, pool, 'x'))).to.be.instanceOf(
        InvalidArgumentError,
      );
    });

    it('fails outside the running state with PoolStateError', async () => {
      const pool = spawnPool(system.root, behavior({ workerProps: () => new Recorder([]) }));
      const { pool: ctx } = await requestUrgent<{ pool: PoolContext }>(system.root, pool, 'ctx');
      const gone = system.root.watch(pool);
      system.root.stop(pool);
      await gone;
      expect(() => ctx.addWorkers(1)).to.throw(PoolStateError);
      expect(() => ctx.removeWorkers(1)).to.throw(PoolStateError);
    });
  });

  describe('stopping', () => {
    it('stop ends the pool and its workers and tells watchers of the pool PID', async () => {
      const pool = spawnPool(system.root, behavior({ workerProps: () => new Recorder([]) }));
      const workers = await workersOf(pool);
      const gone = [pool, ...workers].map((p) => system.root.watch(p));
      system.root.stop(pool);
      const terminated = await Promise.all(gone);
      expect(terminated[0]!.who.equals(pool)).to.equal(true);
      const err = await rejection(system.root.request(pool, 'late'));
      expect(err).to.be.instanceOf(DeadLetterError);
    });

    it('poison lets every worker finish its queue before the pool stops', async () => {
      const hold = gate();
      const log: Seen[] = [];
      const pool = spawnPool(
        system.root,
        behavior({ poolSize: 2, workerProps: () => new Recorder(log, undefined, hold.promise) }),
      );
      await workersOf(pool);
      for (let i = 0; i < 6; i++) system.root.send(pool, i);
      system.root.poison(pool);
      const gone = system.root.watch(pool);
      hold.open();
      await gone;
      expect(log.map((s) => s.message).sort()).to.deep.equal([0, 1, 2, 3, 4, 5]);
    });

    it('rejects work sent while the pool drains with DeadLetterError, at once', async () => {
      const hold = gate();
      const pool = spawnPool(
        system.root,
        behavior({ poolSize: 1, workerProps: () => new Recorder([], undefined, hold.promise) }),
      );
      await workersOf(pool);
      const first = system.root.request(pool, 'first');
      system.root.poison(pool);
      const stats = await inspectPool(system.root, pool);
      expect(stats.state).to.equal('draining');
      const err = await rejection(system.root.request(pool, 'late'));
      expect(err).to.be.instanceOf(DeadLetterError);
      hold.open();
      expect(await first).to.deep.include({ message: 'first' });
    });

    it('calls terminate when the pool has stopped', async () => {
      let reason: string | undefined;
      const pool = spawnPool(
        system.root,
        behavior({ workerProps: () => new Recorder([]) }, { terminate: (r) => void (reason = r) }),
      );
      await workersOf(pool);
      const gone = system.root.watch(pool);
      system.root.stop(pool);
      await gone;
      expect(reason).to.equal('stopped');
    });
  });

  describe('pool actor failure', () => {
    it('holds work sent while its supervisor decides, then gives it to the new workers', async () => {
      // The pool's parent decides only when the test says so, to hold the pool actor failed.
      let decide: (() => void) | undefined;
      const supervisor: SupervisorStrategy = {
        handleFailure: (s: Supervisor, child: PID) => {
          decide = () => s.restartChildren(child);
        },
      };
      const log: Seen[] = [];
      const parent = system.root.spawn(
        Props.fromFunc(
          (ctx) => {
            if (ctx.message !== 'spawn') return;
            ctx.respond(
              spawnPool(
                ctx,
                behavior(
                  { poolSize: 2, workerProps: () => new Recorder(log) },
                  {
                    handleMessage: () => {
                      throw new Error('management bug');
                    },
                  },
                ),
              ),
            );
          },
          { supervisor },
        ),
      );
      const pool = await system.root.request<PID>(parent, 'spawn');
      const before = (await workersOf(pool)).map((p) => p.id);
      system.root.send(pool, 'boom', { priority: 'urgent' });
      await until(() => decide !== undefined);
      let settled = 0;
      const during = [1, 2, 3].map((i) =>
        system.root.request<{ worker: string }>(pool, i).finally(() => settled++),
      );
      for (let i = 0; i < 20; i++) await tick();
      expect(settled).to.equal(0);
      expect(log).to.have.length(0);
      decide!();
      const replies = await Promise.all(during);
      const after = (await workersOf(pool)).map((p) => p.id);
      for (const r of replies) {
        expect(after).to.include(r.worker);
        expect(before).to.not.include(r.worker);
      }
    });

    it('restarts with fresh workers when handleMessage throws, and keeps routing', async () => {
      const log: Seen[] = [];
      const pool = spawnPool(
        system.root,
        behavior(
          { poolSize: 2, workerProps: () => new Recorder(log) },
          {
            handleMessage: () => {
              throw new Error('management bug');
            },
          },
        ),
      );
      const before = await workersOf(pool);
      const gone = before.map((p) => system.root.watch(p));
      system.root.send(pool, 'boom', { priority: 'urgent' });
      await Promise.all(gone);
      const after = await workersOf(pool);
      expect(after).to.have.length(2);
      expect(after.map((p) => p.id)).to.not.include.members(before.map((p) => p.id));
      const reply = await system.root.request<{ worker: string }>(pool, 'work', {
        timeoutMs: 10_000,
      });
      expect(after.map((p) => p.id)).to.include(reply.worker);
      expect((await inspectPool(system.root, pool)).state).to.equal('running');
    });
  });
});

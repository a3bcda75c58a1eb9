import { expect } from 'chai';
import { DeadLetterEvent, Props, Stopping, type ActorSystem, type PID } from '../src/index';
import { deferred, testSystem } from './support';

describe('Dispatcher', () => {
  let system: ActorSystem;
  beforeEach(() => {
    system = testSystem();
  });
  afterEach(() => system.shutdown());

  describe('ordering', () => {
    it('keeps FIFO order per sender while senders interleave', async () => {
      const SENDERS = 5;
      const EACH = 2000;
      const done = deferred<Map<number, number[]>>();
      const seen = new Map<number, number[]>();
      let total = 0;
      const sink = system.root.spawn(
        Props.fromFunc((ctx) => {
          const m = ctx.message as { from: number; n: number };
          if (typeof m !== 'object' || m === null || !('from' in m)) return;
          (seen.get(m.from) ?? seen.set(m.from, []).get(m.from)!).push(m.n);
          if (++total === SENDERS * EACH) done.resolve(seen);
        }),
      );
      const senders: PID[] = [];
      for (let s = 0; s < SENDERS; s++) {
        senders.push(
          system.root.spawn(
            Props.fromFunc((ctx) => {
              if (ctx.message !== 'go') return;
              for (let n = 0; n < EACH; n++) ctx.send(sink, { from: s, n });
            }),
          ),
        );
      }
      for (const p of senders) system.root.send(p, 'go');
      const result = await done.promise;
      for (let s = 0; s < SENDERS; s++) {
        expect(result.get(s)).to.deep.equal(Array.from({ length: EACH }, (_, i) => i));
      }
    });

    it('handles a system message before queued user messages', async () => {
      const processed: unknown[] = [];
      const dead: unknown[] = [];
      system.eventStream.subscribe(DeadLetterEvent, (e) => dead.push(e.message));
      const blocker = deferred();
      const pid = system.root.spawn(
        Props.fromFunc((ctx) => {
          if (ctx.message instanceof Stopping) processed.push('stopping');
          if (typeof ctx.message !== 'number') return;
          processed.push(ctx.message);
          if (ctx.message === 1) {
            // While message 1 runs: 2..5 queue in the user lane, then a stop in the system lane.
            for (let n = 2; n <= 5; n++) ctx.send(ctx.self, n);
            ctx.stop(ctx.self);
            blocker.resolve();
          }
        }),
      );
      const terminated = system.root.watch(pid);
      system.root.send(pid, 1);
      await blocker.promise;
      await terminated;
      expect(processed).to.deep.equal([1, 'stopping']);
      expect(dead).to.deep.equal([2, 3, 4, 5]);
    });

    it('takes urgent messages before ordinary user messages', async () => {
      const order: unknown[] = [];
      const done = deferred();
      const self = system.root.spawn(
        Props.fromFunc((ctx) => {
          if (ctx.message === 'start') {
            ctx.send(ctx.self, 'normal-1');
            ctx.send(ctx.self, 'normal-2');
            ctx.send(ctx.self, 'urgent', { priority: 'urgent' });
            return;
          }
          if (typeof ctx.message === 'string') order.push(ctx.message);
          if (order.length === 3) done.resolve();
        }),
      );
      system.root.send(self, 'start');
      await done.promise;
      expect(order).to.deep.equal(['urgent', 'normal-1', 'normal-2']);
    });
  });

  describe('fairness', () => {
    const FLOOD = 1_000_000;

    it('does not let an actor with 1M queued messages starve another actor', async () => {
      let floodDone = 0;
      const allDone = deferred();
      const flood = system.root.spawn(
        Props.fromFunc((ctx) => {
          if (typeof ctx.message === 'number' && ++floodDone === FLOOD) allDone.resolve();
        }),
      );
      const light = deferred<number>();
      const lightPid = system.root.spawn(
        Props.fromFunc((ctx) => {
          if (ctx.message === 'ready?') ctx.respond(true);
          if (ctx.message === 'ping') light.resolve(floodDone);
        }),
      );
      // Let both actors start, so the ready queue holds only the flood when it begins.
      await system.root.request(lightPid, 'ready?');
      for (let i = 0; i < FLOOD; i++) system.root.send(flood, i);
      system.root.send(lightPid, 'ping');
      const floodAtPing = await light.promise;
      // The light actor waited for at most one flood turn, not for the whole flood.
      expect(floodAtPing).to.be.at.most(2 * system.dispatcher.throughput);
      await allDone.promise;
      expect(floodDone).to.equal(FLOOD);
    });

    it('lets a setTimeout fire within a couple of time slices while an actor is flooded', async () => {
      let processed = 0;
      const flood = system.root.spawn(
        Props.fromFunc((ctx) => {
          if (typeof ctx.message === 'number') processed++;
        }),
      );
      const yieldsBefore = system.dispatcher.yields;
      for (let i = 0; i < FLOOD; i++) system.root.send(flood, i);
      const fired = await new Promise<{ processed: number; slices: number }>((resolve) =>
        setTimeout(() => resolve({ processed, slices: system.dispatcher.yields - yieldsBefore })),
      );
      expect(fired.processed, 'the timer fired while the flood was still running').to.be.below(
        FLOOD,
      );
      expect(fired.slices).to.be.at.most(2);
    });

    it('lets a setTimeout fire during a chain of sequential requests (one macrotask of microtasks)', async () => {
      const ROUND_TRIPS = 100_000;
      const echo = system.root.spawn(Props.fromFunc((ctx) => ctx.respond(ctx.message)));
      let completed = 0;
      let completedWhenFired = -1;
      setTimeout(() => (completedWhenFired = completed));
      // Every await resumes as a microtask, and every reply wakes the idle actor again as a
      // microtask: without slices counted per macrotask this never yields to the timer.
      for (let i = 0; i < ROUND_TRIPS; i++) {
        await system.root.request(echo, i);
        completed++;
      }
      expect(completedWhenFired, 'the timer fired before the chain ended').to.be.within(
        0,
        ROUND_TRIPS - 1,
      );
    });
  });
});

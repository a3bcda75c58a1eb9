import { expect } from 'chai';
import { performance } from 'node:perf_hooks';
import {
  InvalidOptionError,
  NotInfluenceReceiveTimeout,
  Props,
  ReceiveTimeout,
  Started,
  TimerWheel,
  type ActorSystem,
} from '../src/index';
import { deferred, testSystem } from './support';

/** Counts setTimeout calls made while `fn` runs (and until its promise settles). */
async function countSetTimeouts<T>(fn: () => Promise<T>): Promise<{ result: T; calls: number }> {
  const original = globalThis.setTimeout;
  let calls = 0;
  globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
    calls++;
    return original(...args);
  }) as typeof setTimeout;
  try {
    return { result: await fn(), calls };
  } finally {
    globalThis.setTimeout = original;
  }
}

describe('TimerWheel', () => {
  let wheel: TimerWheel;
  beforeEach(() => {
    wheel = new TimerWheel({ tickMs: 5 });
  });
  afterEach(() => wheel.stop());

  describe('schedule', () => {
    it('fires no earlier than the delay', async () => {
      const start = performance.now();
      const at = await new Promise<number>((resolve) =>
        wheel.schedule(30, () => resolve(performance.now())),
      );
      expect(at - start).to.be.at.least(30);
    });

    it('fires entries in deadline order and disarms when empty', async () => {
      const order: number[] = [];
      const done = deferred();
      for (const d of [40, 10, 25]) {
        wheel.schedule(d, () => {
          order.push(d);
          if (order.length === 3) done.resolve();
        });
      }
      await done.promise;
      expect(order).to.deep.equal([10, 25, 40]);
      expect(wheel.size).to.equal(0);
    });

    it('handles delays longer than one rotation of the wheel', async () => {
      const small = new TimerWheel({ tickMs: 1, slots: 8 });
      const start = performance.now();
      const at = await new Promise<number>((r) => small.schedule(30, () => r(performance.now())));
      expect(at - start).to.be.at.least(30);
      small.stop();
    });
  });

  describe('cancel', () => {
    it('never runs a cancelled callback', async () => {
      let ran = false;
      const handle = wheel.schedule(10, () => (ran = true));
      handle.cancel();
      handle.cancel();
      await new Promise<void>((r) => wheel.schedule(30, r));
      expect(ran).to.equal(false);
    });
  });

  it('rejects a tickMs below 1 with InvalidOptionError', () => {
    expect(() => new TimerWheel({ tickMs: 0 })).to.throw(InvalidOptionError, 'timers.tickMs');
  });
});

describe('receive timeout', () => {
  let system: ActorSystem;
  beforeEach(() => {
    system = testSystem({ timers: { tickMs: 5 } });
  });
  afterEach(() => system.shutdown());

  it('delivers ReceiveTimeout after the idle period and again while idle', async () => {
    const fired: number[] = [];
    const twice = deferred();
    const start = performance.now();
    system.root.spawn(
      Props.fromFunc((ctx) => {
        if (ctx.message instanceof Started) ctx.setReceiveTimeout(20);
        if (ctx.message instanceof ReceiveTimeout) {
          fired.push(performance.now() - start);
          if (fired.length === 2) {
            ctx.cancelReceiveTimeout();
            twice.resolve();
          }
        }
      }),
    );
    await twice.promise;
    expect(fired[0]).to.be.at.least(20);
    expect(fired[1]! - fired[0]!).to.be.at.least(19);
  });

  it('is reset by user messages but not by NotInfluenceReceiveTimeout ones', async () => {
    class Tick {
      readonly [NotInfluenceReceiveTimeout] = true;
    }
    const events: string[] = [];
    const fired = deferred();
    const pid = system.root.spawn(
      Props.fromFunc((ctx) => {
        if (ctx.message instanceof Started) ctx.setReceiveTimeout(60);
        if (ctx.message === 'work') events.push('work');
        if (ctx.message instanceof Tick) events.push('tick');
        if (ctx.message instanceof ReceiveTimeout) {
          events.push('timeout');
          ctx.cancelReceiveTimeout();
          fired.resolve();
        }
      }),
    );
    // Work every 15 ms for 150 ms keeps it from firing; only ticks after that do not.
    for (let i = 0; i < 10; i++) {
      system.root.send(pid, 'work');
      await new Promise((r) => setTimeout(r, 15));
    }
    const ticker = setInterval(() => system.root.send(pid, new Tick()), 10);
    await fired.promise;
    clearInterval(ticker);
    expect(events.slice(0, 10)).to.deep.equal(Array(10).fill('work'));
    expect(events).to.include('timeout');
  });

  it('fires for 100k actors, all on one underlying timer', async function () {
    this.timeout(60_000);
    const ACTORS = 100_000;
    let fired = 0;
    const all = deferred();
    const props = Props.fromFunc((ctx) => {
      if (ctx.message instanceof Started) ctx.setReceiveTimeout(50);
      else if (ctx.message instanceof ReceiveTimeout) {
        ctx.cancelReceiveTimeout();
        if (++fired === ACTORS) all.resolve();
      }
    });
    const { calls } = await countSetTimeouts(async () => {
      for (let i = 0; i < ACTORS; i++) system.root.spawn(props);
      await all.promise;
    });
    expect(fired).to.equal(ACTORS);
    // One wheel timer re-armed once per tick: a handful of calls, not one per actor.
    expect(calls).to.be.below(100);
    expect(system.timers.size).to.equal(0);
  });
});

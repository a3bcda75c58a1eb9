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
    // The second period starts when the first fired: never before 2 × 20 ms.
    expect(fired[0]).to.be.at.least(20);
    expect(fired[1]).to.be.at.least(40);
  });

  it('is reset by user messages but not by NotInfluenceReceiveTimeout ones', async () => {
    class Tick {
      readonly [NotInfluenceReceiveTimeout] = true;
    }
    const TIMEOUT = 40;
    const works: number[] = [];
    const timeouts: number[] = [];
    const fired = deferred();
    const pid = system.root.spawn(
      Props.fromFunc((ctx) => {
        const now = performance.now();
        if (ctx.message instanceof Started) ctx.setReceiveTimeout(TIMEOUT);
        if (ctx.message === 'work') works.push(now);
        if (ctx.message instanceof ReceiveTimeout) {
          timeouts.push(now);
          if (works.length >= 10) {
            ctx.cancelReceiveTimeout();
            fired.resolve();
          }
        }
      }),
    );
    // Work every 10 ms, then only ticks (which must not keep the timeout from firing).
    const worker = setInterval(() => system.root.send(pid, 'work'), 10);
    while (works.length < 10) await new Promise((r) => setTimeout(r, 5));
    clearInterval(worker);
    const ticker = setInterval(() => system.root.send(pid, new Tick()), 5);
    await fired.promise;
    clearInterval(ticker);
    // Load-proof invariant: every timeout came at least TIMEOUT ms after the last work.
    for (const t of timeouts) {
      const lastWork = Math.max(...works.filter((w) => w <= t));
      expect(t - lastWork).to.be.at.least(TIMEOUT - 1);
    }
    expect(timeouts[timeouts.length - 1]).to.be.greaterThan(works[works.length - 1]!);
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
    const armedBefore = system.timers.armCount;
    const start = performance.now();
    const { calls } = await countSetTimeouts(async () => {
      for (let i = 0; i < ACTORS; i++) system.root.spawn(props);
      await all.promise;
    });
    const elapsed = performance.now() - start;
    expect(fired).to.equal(ACTORS);
    // At most one setTimeout per 5 ms tick (the wheel's own), not one per actor.
    const perTick = Math.ceil(elapsed / 5) + 2;
    expect(calls).to.be.at.most(perTick);
    expect(system.timers.armCount - armedBefore).to.be.at.most(perTick);
    expect(calls).to.be.below(ACTORS / 50);
    expect(system.timers.size).to.equal(0);
  });
});

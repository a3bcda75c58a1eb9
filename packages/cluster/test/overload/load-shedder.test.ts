import { expect } from 'chai';
import { performance } from 'node:perf_hooks';
import { ActorSystem, Props } from '@granary/core';
import { silentLogger } from '@granary/testkit';
import { LoadShedder } from '../../src/overload/load-shedder';
import { resolveOverloadOptions, type OverloadOptions } from '../../src/overload/overload-options';

/** Spins the event loop's thread for `ms` (a turn with a fixed CPU cost). */
function burn(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

/** Resolves once `check()` holds, polled every 5 ms; rejects after `timeoutMs`. */
function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const start = Date.now();
  return new Promise((resolve, reject) => {
    const poll = (): void => {
      if (check()) resolve();
      else if (Date.now() - start > timeoutMs) reject(new Error(`not within ${timeoutMs} ms`));
      else setTimeout(poll, 5);
    };
    poll();
  });
}

describe('LoadShedder', () => {
  let system: ActorSystem;
  let shedder: LoadShedder;

  const start = (overload: OverloadOptions): void => {
    system = new ActorSystem({ name: 'shedder', logger: silentLogger });
    shedder = new LoadShedder(system, resolveOverloadOptions(overload));
  };

  afterEach(async () => {
    shedder.close();
    await system.shutdown();
  });

  /**
   * An actor whose every message burns `ms`, sent `count` messages; `ran()` counts those run.
   * With `upTo`, each message run sends it one more until `stop()` (or `upTo` in all): a run
   * queue that stays full (a dispatcher turn of `throughput` messages) as long as the test
   * needs. A fixed flood is a fixed amount of work; on a loaded host, where a 5 ms burn costs a
   * scheduling period (~35 ms), it outlasted the test's bound before the shedder's third tick
   * (the shedder's timer runs between dispatcher turns only, once per turn).
   */
  const flood = (count: number, ms: number, upTo = count) => {
    let ran = 0;
    let stopped = false;
    const pid = system.root.spawn(
      Props.fromFunc((ctx) => {
        if (typeof ctx.message !== 'number') return;
        burn(ms);
        ran++;
        if (!stopped && ran + count <= upTo) ctx.send(ctx.self, ran);
      }),
    );
    for (let i = 0; i < count; i++) system.root.send(pid, i);
    return {
      ran: (): number => ran,
      stop: (): void => {
        stopped = true;
      },
    };
  };

  /**
   * Holds the event loop `ms` at a time, over and over, until stopped: to the shedder's probe and
   * tick, what a host whose other processes take the CPU looks like (the process does not run
   * for a while), with no call of the member pending.
   */
  const starve = (ms: number) => {
    let timer: NodeJS.Timeout | undefined = setTimeout(function hold() {
      burn(ms);
      timer = setTimeout(hold, 1);
    }, 1);
    return { stop: () => clearTimeout(timer) };
  };

  /** Calls a member would hold queued under real overload (above the shedding floor of 64). */
  const QUEUED = 1000;

  describe('admit', () => {
    it('refuses every call beyond maxPendingCalls, shedding or not', () => {
      start({ maxPendingCalls: 3 });
      shedder.pending = 3;
      expect(shedder.admit(true, false)).to.equal('maxPendingCalls');
      shedder.pending = 2;
      expect(shedder.admit(false, true)).to.equal(undefined);
      expect(shedder.refused.maxPendingCalls).to.equal(1);
    });
  });

  describe('options', () => {
    it('takes a deadlineShare in [0, 1) and names the option it refuses', () => {
      expect(resolveOverloadOptions(undefined).loadShedding.deadlineShare).to.equal(0.05);
      expect(
        resolveOverloadOptions({ loadShedding: { deadlineShare: 0 } }).loadShedding,
      ).to.have.property('deadlineShare', 0);
      for (const bad of [1, -0.1, NaN]) {
        expect(() => resolveOverloadOptions({ loadShedding: { deadlineShare: bad } })).to.throw(
          /overload\.loadShedding\.deadlineShare/,
        );
      }
    });
  });

  describe('shedding', () => {
    it('starts once the run queue stays above targetMs for intervalMs; refuses new calls and activations, not chain calls', async () => {
      start({ loadShedding: { targetMs: 20, intervalMs: 60 } });
      shedder.pending = QUEUED; // the calls the flood stands for
      // A message of 5 ms that sends itself another: dispatcher turns of 64 messages (320 ms)
      // until stopped, at most 20 s of work; once stopped, it drains within a turn.
      const load = flood(1, 5, 4000);
      await until(() => shedder.shedding, 20_000);
      expect(shedder.episodes).to.equal(1);
      // above the cap the completion rate allows
      expect(shedder.admit(false, false)).to.equal('loadShedding');
      expect(shedder.admit(true, false)).to.equal(undefined);
      expect(shedder.admit(true, true)).to.equal('loadShedding');
      expect(shedder.refused.loadShedding).to.equal(2);
      shedder.pending = 0;
      // The flood drains; an interval without a refusal and under the target ends it.
      load.stop();
      await until(() => !shedder.shedding, 20_000);
      expect(shedder.takeMaxDelay('stats')).to.be.at.least(20);
      // The metrics' reader keeps its own maximum: the read above did not reset it.
      expect(shedder.takeMaxDelay('metrics')).to.be.at.least(20);
    });

    it('starts with maxPendingCalls under 64 once that many calls are pending', async () => {
      start({ maxPendingCalls: 20, loadShedding: { targetMs: 20, intervalMs: 60 } });
      shedder.pending = 20; // every call the member admits
      const load = flood(1, 5, 4000);
      await until(() => shedder.shedding, 20_000);
      load.stop();
    });

    it('absorbs a burst shorter than intervalMs', async () => {
      start({ loadShedding: { targetMs: 20, intervalMs: 300 } });
      shedder.pending = QUEUED;
      // Let the probe tick first: a tick measures how late it is against the previous one.
      await new Promise((resolve) => setTimeout(resolve, 100));
      flood(1, 60);
      const end = Date.now() + 500;
      await until(() => shedder.shedding || Date.now() > end, 2000);
      expect(shedder.shedding).to.equal(false);
      expect(shedder.takeMaxDelay('stats')).to.be.at.least(20);
    });

    it("tolerates a run queue that its calls' deadlines allow, and sheds once a call with a short deadline comes", async () => {
      start({ loadShedding: { targetMs: 20, intervalMs: 60 } });
      shedder.pending = QUEUED;
      // A call with 120 s left allows 6 s of run-queue delay (deadlineShare 0.05): above a
      // dispatcher turn of the flood (64 x 5 ms) on a host so loaded that each burn costs a
      // scheduling period (~35 ms, 2.2 s a turn).
      expect(shedder.admit(false, false, Date.now() + 120_000)).to.equal(undefined);
      const held = flood(200, 5); // a second of work in turns of 5 ms, 64 per dispatcher turn
      await until(() => held.ran() === 200, 20_000);
      expect(shedder.takeMaxDelay('stats'), 'the flood held the run queue').to.be.at.least(20);
      expect(shedder.shedding, 'shed a queue well within 120 s deadlines').to.equal(false);
      expect(shedder.episodes).to.equal(0);
      // A call with 100 ms left allows only targetMs (20 ms): the same flood, kept up, sheds.
      expect(shedder.admit(false, false, Date.now() + 100)).to.equal(undefined);
      const load = flood(1, 5, 4000);
      await until(() => shedder.shedding, 20_000);
      load.stop();
      expect(shedder.episodes).to.equal(1);
    });

    it('stops once the offered load is gone while the host stays starved of CPU, and does not start again', async () => {
      start({ loadShedding: { targetMs: 20, intervalMs: 60 } });
      shedder.pending = QUEUED;
      const load = flood(1, 5, 4000);
      await until(() => shedder.shedding, 20_000);
      load.stop();
      shedder.pending = 0; // the callers went away
      // Every tick and probe now waits ~40 ms for the loop: above targetMs (20) for good.
      const starved = starve(40);
      try {
        await until(() => !shedder.shedding, 20_000).catch(() => {
          throw new Error('still shedding with no call pending, 20 s after the load was gone');
        });
        const held = Date.now() + 1000;
        await until(() => Date.now() > held, 20_000);
        expect(shedder.takeMaxDelay('stats'), 'the loop was held').to.be.at.least(20);
        expect(shedder.shedding).to.equal(false);
        expect(shedder.episodes, 'started again with nothing pending').to.equal(1);
        // Load offered again on the starved host is shed again.
        shedder.pending = QUEUED;
        await until(() => shedder.shedding, 20_000);
        expect(shedder.episodes).to.equal(2);
      } finally {
        starved.stop();
      }
    });

    it('does not shed on a host starved of CPU while it has fewer than 64 calls pending', async () => {
      start({ loadShedding: { targetMs: 20, intervalMs: 60 } });
      shedder.pending = 10;
      const starved = starve(40);
      try {
        const end = Date.now() + 1500;
        await until(() => shedder.shedding || Date.now() > end, 20_000);
        expect(shedder.takeMaxDelay('stats'), 'the loop was held').to.be.at.least(20);
        expect(shedder.shedding).to.equal(false);
        expect(shedder.episodes).to.equal(0);
      } finally {
        starved.stop();
      }
    });

    it('never sheds with loadShedding.enabled false', async () => {
      start({ loadShedding: { enabled: false, targetMs: 5, intervalMs: 20 } });
      shedder.pending = QUEUED;
      const held = flood(100, 5);
      await until(() => held.ran() === 100, 20_000);
      expect(shedder.shedding).to.equal(false);
      expect(shedder.episodes).to.equal(0);
    });
  });
});

import { expect } from 'chai';
import { performance } from 'node:perf_hooks';
import { ActorSystem, SYSTEM_CLOCK, type Clock } from '@granary/core';
import { NoHostError } from '../../src/errors';
import { GrainCaller } from '../../src/grains/grain-caller';
import { resolveOverloadOptions } from '../../src/overload/overload-options';
import { OverloadCounters } from '../../src/overload/overload-stats';

/**
 * A call retries (here: no member in view, so NoHostError at its deadline) against its
 * deadline; the member's wall clock stepping (NTP, a VM resumed, an operator) must not move it.
 * Before the caller kept its deadlines on the monotonic clock, a 1 s call took 11 s after a
 * 10 s step back and 0.2 s after a step forward.
 */
describe('GrainCaller deadline when the wall clock steps', () => {
  let system: ActorSystem;
  beforeEach(() => {
    system = new ActorSystem({ name: 'clock-step' });
  });
  afterEach(() => system.shutdown());

  for (const stepMs of [-10_000, 10_000]) {
    it(`ends a 1 s call after 1 s when the wall clock steps ${stepMs < 0 ? 'back' : 'forward'} 10 s during it`, async function () {
      this.timeout(20_000);
      let offset = 0;
      const clock: Clock = { ...SYSTEM_CLOCK, now: () => Date.now() + offset };
      const caller = new GrainCaller({
        system,
        memberId: 'm1',
        overload: resolveOverloadOptions(undefined),
        counters: new OverloadCounters(),
        defaultTimeoutMs: 2000,
        topology: () => ({ version: 1, members: [] }),
        shardCountOf: () => 16,
        onSendFailed: () => {},
        stopped: () => false,
        membershipUnavailable: () => true,
        clock,
        random: () => 0.5,
      });
      const started = performance.now();
      const outcome = caller.request('k', 'g-1', 'hi', { timeoutMs: 1000 }, undefined).then(
        () => undefined,
        (err: unknown) => err,
      );
      const step = setTimeout(() => (offset = stepMs), 200);
      const err = await outcome;
      clearTimeout(step);
      const tookMs = performance.now() - started;
      expect(err).to.be.instanceOf(NoHostError);
      expect(tookMs).to.be.within(950, 1600);
    });
  }
});

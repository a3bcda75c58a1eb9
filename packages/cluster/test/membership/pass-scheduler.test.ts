import { expect } from 'chai';
import { ManualClock } from '@granary/testkit';
import {
  PASS_BURST_QUIET_MS,
  PASS_MAX_DELAY_MS,
  PassScheduler,
} from '../../src/membership/pass-scheduler';
import type { Topology } from '../../src/membership/topology';

const topology = (version: number): Topology => ({ version, members: [] });

describe('PassScheduler (coalescing topology events into placement passes)', () => {
  let clock: ManualClock;
  let passes: number[];
  let scheduler: PassScheduler;

  beforeEach(() => {
    clock = new ManualClock();
    passes = [];
    scheduler = new PassScheduler((t) => passes.push(t.version), clock);
  });

  it('places a lone event at once (a failover waits for no quiet time)', () => {
    scheduler.request(topology(1));
    clock.advance(0);
    expect(passes, 'passes after a lone event, no time passed').to.deep.equal([1]);
  });

  it('places a burst once, on its latest topology, a quiet time after its last event', () => {
    scheduler.request(topology(1));
    clock.advance(0);
    for (let v = 2; v <= 5; v++) {
      clock.advance(100);
      scheduler.request(topology(v));
    }
    clock.advance(PASS_BURST_QUIET_MS - 1);
    expect(passes, 'before the quiet time after the last event').to.deep.equal([1]);
    clock.advance(1);
    expect(passes, 'one pass for the burst, on its latest topology').to.deep.equal([1, 5]);
  });

  it('runs a pass at most PASS_MAX_DELAY_MS after the first event a busy membership left unplaced', () => {
    scheduler.request(topology(1));
    clock.advance(0);
    let v = 1;
    for (let t = 0; t < PASS_MAX_DELAY_MS; t += 100) {
      clock.advance(100);
      scheduler.request(topology(++v));
    }
    // Events at 100..1000 ms: the first of them (100 ms) was placed at most 1 s later.
    expect(passes, 'no quiet time yet').to.deep.equal([1]);
    clock.advance(100);
    expect(
      passes,
      'a pass 1 s after the first unplaced event despite events every 100 ms',
    ).to.deep.equal([1, 11]);
  });
});

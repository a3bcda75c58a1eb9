import { expect } from 'chai';
import { jobBackoffMs, nextFire } from '../../src/reminders/internal/next-fire';
import type { CatchUp } from '../../src/reminders/reminder';
import type { ReminderSpec } from '../../src/reminders/reminder-store';

const spec = (catchUp: CatchUp): ReminderSpec => ({
  dueAt: 10_000,
  periodMs: 1000,
  catchUp,
  maxAttempts: 3,
  backoffMs: 100,
});

describe('nextFire', () => {
  for (const policy of ['skip', 'once', 'all'] as const) {
    it(`${policy}: waits for the first tick, then fires each on time`, () => {
      expect(nextFire(spec(policy), 0, -1, 9_000)).to.deep.equal({ waitUntil: 10_000 });
      expect(nextFire(spec(policy), 0, -1, 10_020)).to.deep.equal({
        tick: 0,
        dueAt: 10_000,
        skipped: 0,
      });
      expect(nextFire(spec(policy), 0, 0, 10_020)).to.deep.equal({ waitUntil: 11_000 });
      // Late by less than a period: not missed, fired under every policy.
      expect(nextFire(spec(policy), 0, 0, 11_900)).to.deep.equal({
        tick: 1,
        dueAt: 11_000,
        skipped: 0,
      });
    });
  }

  // Last claimed tick 1; now 15,500: ticks 2, 3, 4 were missed, 5 is current.
  it('all: fires the first missed tick (then each in turn)', () => {
    expect(nextFire(spec('all'), 0, 1, 15_500)).to.deep.equal({
      tick: 2,
      dueAt: 12_000,
      skipped: 0,
    });
  });

  it('once: one fire for the missed ticks (the latest), then the current one', () => {
    expect(nextFire(spec('once'), 0, 1, 15_500)).to.deep.equal({
      tick: 4,
      dueAt: 14_000,
      skipped: 2,
    });
    expect(nextFire(spec('once'), 0, 4, 15_500)).to.deep.equal({
      tick: 5,
      dueAt: 15_000,
      skipped: 0,
    });
  });

  it('skip: the current tick only, reporting the skipped ones', () => {
    expect(nextFire(spec('skip'), 0, 1, 15_500)).to.deep.equal({
      tick: 5,
      dueAt: 15_000,
      skipped: 3,
    });
  });

  it('counts ticks of a replaced schedule from its t0', () => {
    // Replaced after tick 6 was claimed: the new schedule's first tick is 7, due at dueAt.
    expect(nextFire(spec('all'), 7, 6, 10_050)).to.deep.equal({
      tick: 7,
      dueAt: 10_000,
      skipped: 0,
    });
  });

  it('doubles a job backoff per attempt up to 60 s', () => {
    expect([1, 2, 3].map((a) => jobBackoffMs(spec('all'), a))).to.deep.equal([100, 200, 400]);
    expect(jobBackoffMs(spec('all'), 40)).to.equal(60_000);
  });
});

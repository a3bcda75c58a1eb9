import { expect } from 'chai';
import { RetryBudget } from '../../src/overload/retry-budget';

describe('RetryBudget', () => {
  const budget = (ratio: number, minPerSecond: number, windowMs = 10_000): RetryBudget =>
    new RetryBudget({ ratio, minPerSecond, windowMs });

  const retries = (b: RetryBudget, now: number, tries: number): number => {
    let n = 0;
    for (let i = 0; i < tries; i++) if (b.tryRetry(now)) n++;
    return n;
  };

  describe('tryRetry', () => {
    it('allows retries up to the ratio of the calls in the window', () => {
      const b = budget(0.1, 0);
      for (let i = 0; i < 100; i++) b.callStarted(1000);
      expect(retries(b, 1000, 50)).to.equal(10);
      expect(b.spent).to.equal(10);
      expect(b.refused).to.equal(40);
    });

    it('allows minPerSecond over the window to a member that makes few calls', () => {
      const b = budget(0, 2, 5000);
      b.callStarted(1000);
      expect(retries(b, 1000, 100)).to.equal(10);
    });

    it('forgets calls and retries older than the window', () => {
      const b = budget(0.5, 0, 1000);
      for (let i = 0; i < 10; i++) b.callStarted(1000);
      expect(retries(b, 1000, 10)).to.equal(5);
      // Half a window later the old calls still count, and so do the old retries.
      for (let i = 0; i < 10; i++) b.callStarted(1500);
      expect(retries(b, 1500, 10)).to.equal(5);
      // One window after the first calls, only the second ten count (and their five retries).
      expect(retries(b, 2050, 10)).to.equal(0);
      for (let i = 0; i < 10; i++) b.callStarted(2050);
      expect(retries(b, 2050, 10)).to.equal(5);
      // After a long pause nothing is left.
      expect(retries(b, 60_000, 10)).to.equal(0);
    });
  });
});

import { expect } from 'chai';
import { OwnerThrottle } from '../../src/overload/owner-throttle';

describe('OwnerThrottle', () => {
  const T0 = 1_000_000;

  describe('refuses', () => {
    it('holds nothing back, and counts nothing, until the owner refuses a call for load', () => {
      const t = new OwnerThrottle(() => 0);
      for (let i = 0; i < 100; i++) expect(t.refuses(T0)).to.equal(false);
      expect(t.armedUntil).to.equal(0);
    });

    it('holds back calls beyond about twice what the owner accepts', () => {
      const t = new OwnerThrottle(() => 0.5);
      t.refused(T0);
      // Nothing accepted: p = requests / (requests + 1), above 0.5 from the second request.
      expect(t.refuses(T0)).to.equal(false);
      expect(t.refuses(T0)).to.equal(true);
      // What the owner accepts lets calls through: 5 accepts => p <= 0 for 10 requests.
      const steady = new OwnerThrottle(() => 0.001);
      steady.refused(T0);
      for (let i = 0; i < 5; i++) steady.accepted();
      for (let i = 0; i < 10; i++) expect(steady.refuses(T0)).to.equal(false);
    });

    it('disarms a window after the last refusal, forgetting its counts', () => {
      const t = new OwnerThrottle(() => 0);
      t.refused(T0);
      expect(t.refuses(T0 + 10)).to.equal(true);
      expect(t.refuses(T0 + 2000)).to.equal(false);
      expect(t.armedUntil).to.equal(0);
      // Armed again: counting starts over (one request, nothing accepted: p = 1/2).
      t.refused(T0 + 3000);
      expect(t.refuses(T0 + 3000)).to.equal(true);
    });
  });
});

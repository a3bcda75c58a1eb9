import { expect } from 'chai';
import { InvalidOptionError } from '@granary/core';
import {
  consistentHash,
  leastBusy,
  random,
  resolveStrategy,
  roundRobin,
  type WorkerLoad,
} from '../src/pool-strategy';

function workers(loads: number[], keys = loads.map((_, i) => i * 7919)): WorkerLoad {
  return { count: loads.length, load: (i) => loads[i]!, slotKey: (i) => keys[i]! };
}

describe('pool strategies', () => {
  describe('roundRobin', () => {
    it('starts after the worker that took the last message, wrapping around', () => {
      const s = roundRobin();
      const w = workers([0, 0, 0]);
      const picks: number[] = [];
      for (let k = 0; k < 5; k++) {
        const i = s.first(null, w);
        picks.push(i);
        s.delivered(i);
      }
      expect(picks).to.deep.equal([0, 1, 2, 0, 1]);
    });
  });

  describe('leastBusy', () => {
    it('picks an empty mailbox first, else the least loaded', () => {
      const s = leastBusy();
      expect(s.first(null, workers([3, 0, 2]))).to.equal(1);
      expect(s.first(null, workers([3, 5, 2]))).to.equal(2);
    });

    it('spreads ties instead of always picking the first idle worker', () => {
      const s = leastBusy();
      const w = workers([0, 0, 0]);
      const picks: number[] = [];
      for (let k = 0; k < 3; k++) {
        const i = s.first(null, w);
        picks.push(i);
        s.delivered(i);
      }
      expect(picks).to.deep.equal([0, 1, 2]);
    });
  });

  describe('random', () => {
    it('maps the random number onto a worker index', () => {
      expect(random(() => 0.99).first(null, workers([0, 0, 0, 0]))).to.equal(3);
      expect(random(() => 0).first(null, workers([0, 0, 0, 0]))).to.equal(0);
    });
  });

  describe('consistentHash', () => {
    const byUser = consistentHash((m) => (m as { user: string }).user);

    it('sends the same key to the same worker', () => {
      const w = workers([0, 0, 0, 0]);
      for (let u = 0; u < 50; u++) {
        const msg = { user: `u${u}` };
        expect(byUser.first(msg, w)).to.equal(byUser.first({ ...msg }, w));
      }
    });

    it('moves only the keys of a removed worker', () => {
      const keys = [11, 22, 33, 44];
      const before = workers([0, 0, 0, 0], keys);
      const after = workers([0, 0, 0], keys.slice(0, 3));
      let moved = 0;
      const used = new Set<number>();
      for (let u = 0; u < 400; u++) {
        const msg = { user: `u${u}` };
        const a = byUser.first(msg, before);
        const b = byUser.first(msg, after);
        used.add(a);
        if (a !== 3) expect(b).to.equal(a);
        else moved++;
      }
      expect(used.size).to.equal(4);
      expect(moved).to.be.greaterThan(50).and.lessThan(150);
    });

    it('does not fall back to another worker (affinity)', () => {
      expect(byUser.fallback).to.equal(false);
    });
  });

  describe('resolveStrategy', () => {
    it('rejects an unknown name with InvalidOptionError naming the option', () => {
      expect(() => resolveStrategy('fastest' as never))
        .to.throw(InvalidOptionError)
        .with.property('option', 'strategy');
    });

    it('builds a fresh strategy per name', () => {
      expect(resolveStrategy('broadcast')).to.include({ name: 'broadcast', broadcast: true });
      expect(resolveStrategy('least-busy').name).to.equal('least-busy');
    });
  });
});

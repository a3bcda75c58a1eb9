import { expect } from 'chai';
import type { Member, Topology } from '../../src/membership/topology';
import { Ring } from '../../src/placement/ring';
import { TopologyPlacement } from '../../src/placement/topology-placement';

const RANGES = 4096;

function member(id: string, kinds = ['A', 'B'], status: Member['status'] = 'up'): Member {
  const kindShards = Object.fromEntries(
    kinds.map((k) => [k, { shardCount: RANGES * 2, ranges: RANGES }]),
  );
  return { id, address: `${id}:1`, kinds, incarnation: 1, status, kindShards };
}

function topology(version: number, members: Member[]): Topology {
  return { version, members: [...members].sort((a, b) => (a.id < b.id ? -1 : 1)) };
}

/** Owner ids of every range of `kind`. */
function owners(p: TopologyPlacement, kind: string): string[] {
  const kp = p.kind(kind);
  return Array.from({ length: RANGES }, (_, r) => p.owner(kp, r)?.id ?? '-');
}

/** A deterministic pseudo-random sequence (mulberry32). */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('Ring', () => {
  it('patched with joins and leaves equals the ring built from scratch for the same members', () => {
    const random = rng(7);
    let ids = Array.from({ length: 50 }, (_, i) => `m${i}`);
    let ring = Ring.build(ids);
    for (let step = 0; step < 40; step++) {
      const remove = ids.filter(() => random() < 0.05);
      const add = Array.from({ length: Math.floor(random() * 4) }, () => `n${step}-${random()}`);
      ids = [...ids.filter((id) => !remove.includes(id)), ...add];
      ring = ring.with(add, remove);
      const fresh = Ring.build(ids);
      expect([...ring.points]).to.deep.equal([...fresh.points]);
      expect([...ring.slots].map((s) => ring.ids[s])).to.deep.equal(
        [...fresh.slots].map((s) => fresh.ids[s]),
      );
    }
  });
});

describe('TopologyPlacement', () => {
  it('derived from the previous topology, gives the owners a fresh placement gives', () => {
    const random = rng(11);
    let members = Array.from({ length: 40 }, (_, i) => member(`m${i}`));
    let prev = new TopologyPlacement(topology(1, members), undefined);
    owners(prev, 'A');
    owners(prev, 'B');
    for (let v = 2; v < 30; v++) {
      const leave = members.filter(() => random() < 0.05).map((m) => m.id);
      const join = Array.from({ length: Math.floor(random() * 3) }, (_, i) =>
        member(`j${v}-${i}`, random() < 0.5 ? ['A', 'B'] : ['A']),
      );
      members = [...members.filter((m) => !leave.includes(m.id)), ...join];
      const t = topology(v, members);
      const derived = new TopologyPlacement(t, prev);
      const fresh = new TopologyPlacement(t, undefined);
      expect(owners(derived, 'A')).to.deep.equal(owners(fresh, 'A'));
      expect(owners(derived, 'B')).to.deep.equal(owners(fresh, 'B'));
      prev.forgetPrevious();
      prev = derived;
    }
  });

  it('kinds hosted by the same members share one ring', () => {
    const p = new TopologyPlacement(topology(1, [member('a'), member('b')]), undefined);
    expect(p.kind('A').ring).to.equal(p.kind('B').ring);
  });

  it('a join moves about 1/(n+1) of the ranges, all to the new member', () => {
    const members = Array.from({ length: 32 }, (_, i) => member(`m${i}`));
    const before = new TopologyPlacement(topology(1, members), undefined);
    const a = owners(before, 'A');
    const after = new TopologyPlacement(topology(2, [...members, member('new')]), before);
    const b = owners(after, 'A');
    let moved = 0;
    for (let r = 0; r < RANGES; r++) {
      if (a[r] !== b[r]) {
        moved++;
        expect(b[r]).to.equal('new');
      }
    }
    expect(moved / RANGES).to.be.within((1 / 33) * 0.6, (1 / 33) * 1.4);
  });

  it('a leave moves only the ranges the leaver owned', () => {
    const members = Array.from({ length: 32 }, (_, i) => member(`m${i}`));
    const before = new TopologyPlacement(topology(1, members), undefined);
    const a = owners(before, 'A');
    const after = new TopologyPlacement(topology(2, members.slice(1)), before);
    const b = owners(after, 'A');
    for (let r = 0; r < RANGES; r++) if (a[r] !== 'm0') expect(b[r]).to.equal(a[r]);
    expect(b.includes('m0')).to.equal(false);
  });

  it('spreads ranges within a few tens of percent of the mean over 100 members', () => {
    const p = new TopologyPlacement(
      topology(
        1,
        Array.from({ length: 100 }, (_, i) => member(`m${i}`)),
      ),
      undefined,
    );
    const counts = new Map<string, number>();
    for (const id of owners(p, 'A')) counts.set(id, (counts.get(id) ?? 0) + 1);
    const mean = RANGES / 100;
    expect(counts.size).to.equal(100);
    for (const c of counts.values()) expect(c).to.be.within(mean * 0.4, mean * 1.8);
  });
});

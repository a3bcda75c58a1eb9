import { expect } from 'chai';
import type { Member, Topology } from '../../src/membership/topology';
import { hostsOf, ownerOf } from '../../src/placement/owner-of';

function member(id: string, kinds = ['K'], status: Member['status'] = 'up'): Member {
  return { id, address: `${id}:1`, kinds, incarnation: 1, status };
}

function topology(version: number, members: Member[]): Topology {
  return { version, members };
}

describe('ownerOf', () => {
  it('gives the same owner for the same topology content, whatever the snapshot object', () => {
    const a = topology(1, [member('a'), member('b'), member('c')]);
    const b = topology(1, [member('a'), member('b'), member('c')]);
    for (let s = 0; s < 256; s++) expect(ownerOf('K', s, a)?.id).to.equal(ownerOf('K', s, b)?.id);
  });

  it('only picks up members that host the kind', () => {
    const t = topology(2, [
      member('a'),
      member('b', ['Other']),
      member('c', ['K'], 'leaving'),
      member('d', ['K'], 'joining'),
    ]);
    for (let s = 0; s < 64; s++) expect(ownerOf('K', s, t)?.id).to.equal('a');
    expect(hostsOf('K', t).map((m) => m.id)).to.deep.equal(['a']);
  });

  it('is undefined when no member hosts the kind', () => {
    expect(ownerOf('Nobody', 0, topology(3, [member('a')]))).to.equal(undefined);
  });

  it('spreads shards roughly evenly over the members', () => {
    const t = topology(4, [member('a'), member('b'), member('c'), member('d')]);
    const counts = new Map<string, number>();
    for (let s = 0; s < 1024; s++) {
      const id = ownerOf('K', s, t)!.id;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    for (const c of counts.values()) expect(c).to.be.within(1024 / 4 - 80, 1024 / 4 + 80);
  });

  it('moves only shards to the new member when one joins (consistent hashing)', () => {
    const before = topology(5, [member('a'), member('b'), member('c')]);
    const after = topology(6, [member('a'), member('b'), member('c'), member('d')]);
    let moved = 0;
    for (let s = 0; s < 256; s++) {
      const o1 = ownerOf('K', s, before)!.id;
      const o2 = ownerOf('K', s, after)!.id;
      if (o1 !== o2) {
        expect(o2).to.equal('d');
        moved++;
      }
    }
    expect(moved / 256).to.be.within(0.25 * 0.75, 0.25 * 1.25);
  });
});

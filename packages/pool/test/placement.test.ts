import { expect } from 'chai';
import { place } from '../src/cluster/internal/placement';

function perHost(assignment: Map<number, string>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const h of assignment.values()) out[h] = (out[h] ?? 0) + 1;
  return out;
}

describe('place (cluster pool placement)', () => {
  it('spreads new workers evenly: 12 over 3 is 4/4/4, 10 over 3 is 4/3/3', () => {
    expect(perHost(place(12, ['a', 'b', 'c'], new Map(), Infinity).assignment)).to.deep.equal({
      a: 4,
      b: 4,
      c: 4,
    });
    const ten = perHost(place(10, ['a', 'b', 'c'], new Map(), Infinity).assignment);
    expect(Object.values(ten).sort()).to.deep.equal([3, 3, 4]);
  });

  it('moves only the workers of a member that is gone', () => {
    const current = new Map([
      ['a', [0, 1, 2]],
      ['b', [3, 4, 5]],
      ['c', [6, 7, 8]],
    ]);
    const plan = place(12, ['a', 'b', 'c'], current, Infinity); // d (9, 10, 11) is gone
    expect(plan.retire).to.deep.equal([]);
    expect(plan.activate.map((a) => a.index).sort((x, y) => x - y)).to.deep.equal([9, 10, 11]);
    for (const [host, list] of current) {
      for (const i of list) expect(plan.assignment.get(i)).to.equal(host);
    }
    expect(perHost(plan.assignment)).to.deep.equal({ a: 4, b: 4, c: 4 });
  });

  it('on a join, takes just enough workers from the others for the newcomer', () => {
    const current = new Map([
      ['a', [0, 1, 2, 3]],
      ['b', [4, 5, 6, 7]],
      ['c', [8, 9, 10, 11]],
    ]);
    const plan = place(12, ['a', 'b', 'c', 'd'], current, Infinity);
    expect(perHost(plan.assignment)).to.deep.equal({ a: 3, b: 3, c: 3, d: 3 });
    expect(plan.retire).to.have.length(3);
    expect(plan.activate.every((a) => a.host === 'd')).to.equal(true);
  });

  it('ends duplicates and workers beyond size', () => {
    const current = new Map([
      ['a', [0, 1, 5]],
      ['b', [1, 2]],
    ]);
    const plan = place(4, ['a', 'b'], current, Infinity);
    expect(plan.retire).to.deep.include.members([
      { host: 'a', index: 5 },
      { host: 'b', index: 1 },
    ]);
    expect(perHost(plan.assignment)).to.deep.equal({ a: 2, b: 2 });
  });

  it('evens out kept workers that leave one member two below another', () => {
    const current = new Map([
      ['a', [0, 1, 2, 3]],
      ['b', [4, 5, 6, 7]],
    ]);
    const plan = place(10, ['a', 'b', 'c'], current, Infinity);
    expect(Object.values(perHost(plan.assignment)).sort()).to.deep.equal([3, 3, 4]);
  });

  it('respects maxPerNode, leaving workers unplaced when members are too few', () => {
    const plan = place(6, ['a', 'b'], new Map(), 2);
    expect(plan.assignment.size).to.equal(4);
    expect(perHost(plan.assignment)).to.deep.equal({ a: 2, b: 2 });
  });
});

import { expect } from 'chai';
import type { Member, Topology } from '../../src/membership/topology';
import { diffTopology } from '../../src/membership/topology-diff';

const m = (id: string, incarnation = 1, status: Member['status'] = 'up'): Member => ({
  id,
  address: `${id}:1`,
  kinds: [],
  incarnation,
  status,
});
const t = (version: number, ...members: Member[]): Topology => ({ version, members });

describe('diffTopology', () => {
  it('reports members that appeared and disappeared', () => {
    const d = diffTopology(t(1, m('a'), m('b')), t(2, m('b'), m('c')));
    expect(d.joined.map((x) => x.id)).to.deep.equal(['c']);
    expect(d.left.map((x) => x.id)).to.deep.equal(['a']);
  });

  it('treats a new incarnation as a leave of the old and a join of the new', () => {
    const d = diffTopology(t(1, m('a', 1)), t(2, m('a', 5)));
    expect(d.left.map((x) => x.incarnation)).to.deep.equal([1]);
    expect(d.joined.map((x) => x.incarnation)).to.deep.equal([5]);
  });

  it('ignores a status change alone', () => {
    const d = diffTopology(t(1, m('a')), t(2, m('a', 1, 'leaving')));
    expect(d).to.deep.equal({ joined: [], left: [] });
  });
});

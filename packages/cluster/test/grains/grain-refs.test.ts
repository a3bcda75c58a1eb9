import { expect } from 'chai';
import type { Topology } from '../../src/membership/topology';
import { GrainRefs } from '../../src/grains/internal/grain-refs';

const topology = (version: number): Topology => ({ version, members: [] }) as unknown as Topology;

describe('GrainRefs (a caller’s grain references)', () => {
  it('hashes an identity once and keeps its reference', () => {
    const refs = new GrainRefs();
    let hashed = 0;
    const shard = (): number => (hashed++, 7);
    const a = refs.get('counter', 'c-1', shard);
    expect(refs.get('counter', 'c-1', shard)).to.equal(a);
    expect(refs.get('other', 'c-1', shard)).to.not.equal(a);
    expect(hashed).to.equal(2);
    expect(a.shard).to.equal(7);
  });

  it('makes the PID at the owner once per owner, and one for a hint without keeping it', () => {
    const refs = new GrainRefs();
    const ref = refs.get('counter', 'c/1', () => 0);
    ref.resolve(topology(1), '10.0.0.1:1');
    const pid = ref.pidAt('10.0.0.1:1');
    expect(pid.id).to.equal('$grains/counter/c/1');
    expect(ref.pidAt('10.0.0.1:1')).to.equal(pid);
    expect(ref.pidAt('10.0.0.2:1').address).to.equal('10.0.0.2:1');
    expect(ref.pidAt('10.0.0.1:1')).to.equal(pid);
    ref.resolve(topology(2), '10.0.0.2:1');
    expect(ref.pidAt('10.0.0.2:1')).to.not.equal(pid);
  });

  it('is bounded: when 10,000 references are held, they are dropped and made again', () => {
    const refs = new GrainRefs();
    const first = refs.get('k', 'id-0', () => 0);
    for (let i = 1; i < 10_000; i++) refs.get('k', `id-${i}`, () => 0);
    expect(refs.get('k', 'id-0', () => 0)).to.equal(first);
    refs.get('k', 'one-more', () => 0);
    expect(refs.get('k', 'id-0', () => 0)).to.not.equal(first);
  });
});

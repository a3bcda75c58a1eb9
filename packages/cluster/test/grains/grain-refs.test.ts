import { expect } from 'chai';
import type { Topology } from '../../src/membership/topology';
import { GrainRefs } from '../../src/grains/internal/grain-refs';

const topology = (version: number): Topology => ({ version, members: [] }) as unknown as Topology;

describe('GrainRefs (a caller’s grain references)', () => {
  it('keeps a reference per kind and identity', () => {
    const refs = new GrainRefs();
    expect(refs.get('counter', 'c-1')).to.equal(undefined);
    const a = refs.add('counter', 'c-1', 7);
    expect(refs.get('counter', 'c-1')).to.equal(a);
    expect(refs.get('other', 'c-1')).to.equal(undefined);
    expect(a.shard).to.equal(7);
  });

  it('makes the PID at the owner once per owner, and one for a hint without keeping it', () => {
    const refs = new GrainRefs();
    const ref = refs.add('counter', 'c/1', 0);
    ref.resolve(topology(1), '10.0.0.1:1');
    const pid = ref.pidAt('10.0.0.1:1');
    expect(pid.id).to.equal('$g/counter/c/1');
    expect(ref.pidAt('10.0.0.1:1')).to.equal(pid);
    expect(ref.pidAt('10.0.0.2:1').address).to.equal('10.0.0.2:1');
    expect(ref.pidAt('10.0.0.1:1')).to.equal(pid);
    ref.resolve(topology(2), '10.0.0.2:1');
    expect(ref.pidAt('10.0.0.2:1')).to.not.equal(pid);
  });

  it('lets go of the topology when it changes, so the next call resolves the owner again', () => {
    const refs = new GrainRefs();
    const ref = refs.add('counter', 'c-1', 0);
    ref.resolve(topology(1), '10.0.0.1:1');
    refs.topologyChanged();
    expect(ref.topology).to.equal(undefined);
    expect(ref.address).to.equal('10.0.0.1:1');
  });

  it('is bounded: when 10,000 references are held, they are dropped and made again', () => {
    const refs = new GrainRefs();
    const first = refs.add('k', 'id-0', 0);
    for (let i = 1; i < 10_000; i++) refs.add('other', `id-${i}`, 0);
    expect(refs.get('k', 'id-0')).to.equal(first);
    refs.add('k', 'one-more', 0);
    expect(refs.get('k', 'id-0')).to.equal(undefined);
    expect(refs.get('k', 'one-more')).to.not.equal(undefined);
  });
});

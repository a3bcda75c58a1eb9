import { expect } from 'chai';
import { ActorSystem, silentLogger, type PID } from '@granary/core';
import type { Entry, LocalProcess } from '@granary/core/internal';
import type { Topology } from '../../src/membership/topology';
import { GrainRefs, LocalRoutes } from '../../src/grains/internal/grain-refs';

const topology = (version: number): Topology => ({ version, members: [] }) as unknown as Topology;

/** Routes made for PIDs of other addresses: nothing is cached on them. */
const remoteOnly = new LocalRoutes(new ActorSystem({ logger: silentLogger }));

/** A router stand-in: a LocalProcess of `system` under the prefix of `kind`. */
function fakeRouter(system: ActorSystem, kind: string): LocalProcess & { prefix: string } {
  const posted: Entry[] = [];
  return {
    prefix: `$g/${kind}/`,
    owner: system.registry,
    dead: false,
    capacity: Infinity,
    post: (_pid: PID, entry: Entry) => posted.push(entry) > 0,
    sendSystemMessage: () => {},
    stop: () => {},
  };
}

describe('GrainRefs (a caller’s grain references)', () => {
  it('keeps a reference per kind and identity', () => {
    const refs = new GrainRefs();
    expect(refs.get('counter', 'c-1')).to.equal(undefined);
    const a = refs.add('counter', 'c-1', 7);
    expect(refs.get('counter', 'c-1')).to.equal(a);
    expect(refs.get('other', 'c-1')).to.equal(undefined);
    expect(a.shard).to.equal(7);
  });

  it('keeps the PID at the owner from the second call on, and one for a hint not at all', () => {
    const refs = new GrainRefs();
    const ref = refs.add('counter', 'c/1', 0);
    ref.resolve(topology(1), '10.0.0.1:1', undefined);
    const first = ref.pidAt('10.0.0.1:1', remoteOnly);
    expect(first.id).to.equal('$g/counter/c/1');
    // Called once, nothing is kept (a grain called once holds no PID); the second one is kept.
    const pid = ref.pidAt('10.0.0.1:1', remoteOnly);
    expect(pid, 'the first PID is not kept').to.not.equal(first);
    expect(pid.id).to.equal('$g/counter/c/1');
    expect(ref.pidAt('10.0.0.1:1', remoteOnly), 'the second PID is kept').to.equal(pid);
    expect(ref.pidAt('10.0.0.2:1', remoteOnly).address).to.equal('10.0.0.2:1');
    expect(ref.pidAt('10.0.0.1:1', remoteOnly)).to.equal(pid);
    ref.resolve(topology(2), '10.0.0.2:1', undefined);
    expect(ref.pidAt('10.0.0.2:1', remoteOnly)).to.not.equal(pid);
  });

  it('lets go of the topology when it changes, so the next call resolves the owner again', () => {
    const refs = new GrainRefs();
    const ref = refs.add('counter', 'c-1', 0);
    ref.resolve(topology(1), '10.0.0.1:1', undefined);
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

  it("caches the kind's router on PIDs of grains on this member", async () => {
    const system = new ActorSystem({ logger: silentLogger });
    try {
      const router = fakeRouter(system, 'counter');
      system.registry.addPrefix(router.prefix, router);
      const routes = new LocalRoutes(system);
      const refs = new GrainRefs();
      const local = (identity: string): PID => {
        const ref = refs.add('counter', identity, 0);
        ref.resolve(topology(1), system.address, undefined);
        return ref.pidAt(system.address, routes);
      };
      expect(local('c-1')._p).to.equal(router);
      expect(local('c-2')._p).to.equal(router); // from the per-kind cache
      const other = refs.add('other', 'o-1', 0);
      other.resolve(topology(1), system.address, undefined);
      expect(other.pidAt(system.address, routes)._p).to.equal(undefined); // no router for it
      const remote = refs.add('counter', 'r-1', 0);
      remote.resolve(topology(1), '10.0.0.1:1', undefined);
      expect(remote.pidAt('10.0.0.1:1', routes)._p).to.equal(undefined);
    } finally {
      await system.shutdown();
    }
  });
});

import { expect } from 'chai';
import { KindHosts } from '../../src/grains/internal/kind-hosts';
import { MAX_TOPOLOGY_KINDS } from '../../src/membership/member-record';
import type { Member, Topology } from '../../src/membership/topology';

const member = (id: string, kinds: string[]): Member => ({
  id,
  address: `127.0.0.1:${1000 + (id.length % 100)}`,
  kinds,
  status: 'up',
  incarnation: 1,
});

describe('KindHosts', () => {
  it('remembers a kind no member hosts any more (a call to it waits for a host)', () => {
    const hosts = new KindHosts();
    hosts.topologyChanged({ version: 1, members: [member('a', ['echo'])] });
    const empty: Topology = { version: 2, members: [member('b', ['other'])] };
    hosts.topologyChanged(empty);
    expect(hosts.known('echo', empty)).to.equal(true);
    expect(hosts.details('echo', empty).dropped).to.equal(1);
  });

  it('remembers at most MAX_TOPOLOGY_KINDS kinds when every topology names new ones', () => {
    const hosts = new KindHosts();
    // A hostile gateway: 1,000 new kinds on a new member in every answer.
    let last: Topology | undefined;
    for (let round = 0; round < 40; round++) {
      const kinds = Array.from({ length: 1000 }, (_, i) => `k${round}-${i}`);
      last = { version: round + 1, members: [member(`m${round}`, kinds)] };
      hosts.topologyChanged(last);
    }
    const seen = (hosts as unknown as { seen: Set<string> }).seen;
    const dropped = (hosts as unknown as { dropped: Map<string, Set<string>> }).dropped;
    expect(seen.size).to.be.at.most(MAX_TOPOLOGY_KINDS);
    expect(dropped.size).to.be.at.most(MAX_TOPOLOGY_KINDS);
    // The kinds hosted now are kept; the oldest no member hosts are the ones forgotten.
    expect(hosts.known('k39-999', last!)).to.equal(true);
    expect(seen.has('k0-0')).to.equal(false);
    expect(seen.has('k38-0')).to.equal(true);
  });
});

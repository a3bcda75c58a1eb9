import { expect } from 'chai';
import { Etcd3 } from 'etcd3';
import { isAlive, startEtcdCluster, type EtcdClusterHandle } from '../src/index';

describe('startEtcdCluster', function () {
  this.timeout(60_000);
  let etcd: EtcdClusterHandle;
  before(async () => {
    etcd = await startEtcdCluster();
  });
  after(() => etcd.stop());

  it('starts 3 members that agree on one leader and replicate writes', async () => {
    expect(etcd.endpoints).to.have.length(3);
    const leader = await etcd.leader();
    await client(leader.endpoint, (c) => c.put('k').value('v').exec());
    for (const m of etcd.members) {
      // A linearizable read on each member returns the write made through the leader.
      expect(await client(m.endpoint, (c) => c.get('k').string())).to.equal('v');
    }
  });

  it('survives the loss of the leader: the others elect a new one; the old one rejoins', async () => {
    const old = await etcd.leader();
    const pid = old.pid!;
    await old.kill();
    expect(isAlive(pid)).to.equal(false);
    const next = await etcd.leader();
    expect(next).to.not.equal(old);
    await client(next.endpoint, (c) => c.put('after').value('1').exec());
    await old.restart();
    expect(await client(old.endpoint, (c) => c.get('after').string())).to.equal('1');
  });

  it('follower() names a running member that is not the leader', async () => {
    const leader = await etcd.leader();
    const follower = await etcd.follower();
    expect(follower).to.not.equal(leader);
    expect(follower.running).to.equal(true);
  });
});

async function client<T>(endpoint: string, fn: (c: Etcd3) => Promise<T>): Promise<T> {
  const c = new Etcd3({ hosts: [endpoint] });
  try {
    return await fn(c);
  } finally {
    c.close();
  }
}

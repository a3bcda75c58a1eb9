import { expect } from 'chai';
import { InvalidOptionError } from '@granary/core';
import { startEtcd, type EtcdHandle } from '@granary/testkit';
import { Cluster } from '../../src/cluster';
import { EtcdProvider } from '../../src/providers/etcd/etcd-provider';
import { agreed, waitForClusters } from './converge';

const KIND = 'K';
const SHARDS = 64;

describe('Cluster (EtcdProvider, in one process)', () => {
  let etcd: EtcdHandle;
  let running: Cluster[] = [];
  let n = 0;
  before(async () => {
    etcd = await startEtcd();
  });
  after(async () => {
    await etcd.stop();
  });
  afterEach(async () => {
    await Promise.all(running.map((c) => c.shutdown({ graceful: false })));
    running = [];
  });

  async function start(name: string, id: string): Promise<Cluster> {
    const c = await Cluster.start({
      name,
      id,
      provider: new EtcdProvider({ endpoints: etcd.endpoints, ttlSeconds: 3 }),
      kinds: [{ name: KIND, shardCount: SHARDS }],
    });
    running.push(c);
    return c;
  }

  it('rejects bad provider options before anything joins, naming the option', () => {
    expect(() => new EtcdProvider({ endpoints: [] }))
      .to.throw(InvalidOptionError)
      .with.property('option', 'endpoints');
  });

  it('graceful shutdown: status leaving first, shards handed over, then the member key goes', async () => {
    const name = `inproc${++n}`;
    const a = await start(name, 'a');
    const b = await start(name, 'b');
    await waitForClusters([a, b], () => agreed([a, b], KIND, SHARDS), 'two agree');
    const statuses: string[] = [];
    a.on('topology', (t) => {
      const mb = t.members.find((m) => m.id === 'b');
      statuses.push(mb ? mb.status : 'gone');
    });
    await b.shutdown({ graceful: true });
    running = running.filter((c) => c !== b);
    await waitForClusters(
      [a],
      () => a.heldShards(KIND).length === SHARDS && a.topology.members.length === 1,
      'a holds every shard alone',
    );
    expect(statuses[0]).to.equal('leaving');
    expect(statuses[statuses.length - 1]).to.equal('gone');
  });
});

import { join } from 'node:path';
import { expect } from 'chai';
import {
  startEtcd,
  startTcpProxy,
  TestCluster,
  type EtcdHandle,
  type TcpProxyHandle,
} from '@granary/testkit';
import type { Cluster } from '../../src/cluster';
import { startEtcdClient } from '../fixtures/etcd-client';

const CLUSTER = 'partition';
const GRAINS = 60;
const SHARDS = 32;
/**
 * The partition is shorter than what a member rides out at the defaults (TTL 5 s - margin 0.5 s
 * - keep-alive interval 0.5 s = 4 s): the partitioned node's lease is never lost.
 */
const PARTITION_MS = 2500;

describe('partition heal (etcd)', function () {
  this.timeout(90_000);
  let etcd: EtcdHandle;
  let proxy: TcpProxyHandle;
  let tc: TestCluster | undefined;
  let client: Cluster | undefined;

  before(async () => {
    etcd = await startEtcd();
    proxy = await startTcpProxy({ target: etcd.endpoints[0] });
    tc = await TestCluster.start({
      size: 3,
      script: join(__dirname, '../grains/fixtures/grain-node.js'),
      // node-2 reaches etcd only through the proxy; every lease setting at its default.
      config: (ctx) => ({
        etcdEndpoints: ctx.index === 2 ? [proxy.url] : etcd.endpoints,
        id: ctx.id,
        cluster: CLUSTER,
        shardCount: SHARDS,
        idleTimeoutMs: 60_000,
      }),
    });
    client = await startEtcdClient({
      name: CLUSTER,
      endpoints: etcd.endpoints,
      prefix: '/granary-grains',
    });
  });
  after(async () => {
    await client?.shutdown({ graceful: false });
    await tc?.stop();
    await proxy.close();
    await etcd.stop();
  });

  it('a node cut off from etcd for less than its lease keeps its shards and activations', async () => {
    const where = new Map<string, string>();
    for (let i = 0; i < GRAINS; i++) {
      const r = await client!.request<{ member: string }>('echo', `g-${i}`, 'hi');
      where.set(`g-${i}`, r.member);
    }
    const node = tc!.nodes[2];
    const hosted = [...where].filter(([, m]) => m === node.id).map(([id]) => id);
    expect(hosted.length, 'grains on the partitioned node').to.be.greaterThan(0);
    const lines = node.process!.lines;
    const from = lines.length;
    const othersFrom = tc!.nodes.map((n) => n.process!.lines.length);

    proxy.partition();
    // The partition's length is the scenario itself, not a wait for an outcome.
    await new Promise((r) => setTimeout(r, PARTITION_MS));
    proxy.heal();
    // Long enough after the heal for a late fence, a topology flap or a hand-off to show.
    await new Promise((r) => setTimeout(r, 3000));

    const after = lines.slice(from).map((l) => l.data);
    expect(
      after.filter((d) => d.type === 'lease'),
      'lease events',
    ).to.deep.equal([]);
    expect(
      after.filter((d) => d.type === 'shard-released'),
      'shards released',
    ).to.deep.equal([]);
    expect(
      after.filter((d) => d.type === 'act' && d.event === 'deactivate'),
      'activations ended',
    ).to.deep.equal([]);
    tc!.nodes.forEach((n, i) => {
      const topologies = n
        .process!.lines.slice(othersFrom[i])
        .filter((l) => l.data.type === 'topology');
      expect(
        topologies.map((l) => l.data.members),
        `${n.id} saw the membership change`,
      ).to.deep.equal([]);
    });
    // Its grains answer from the same activation as before.
    for (const id of hosted) {
      const r = await client!.request<{ member: string; n: number }>('echo', id, 'again');
      expect(r.member).to.equal(node.id);
      expect(r.n, `${id} kept its activation`).to.equal(2);
    }
  });
});

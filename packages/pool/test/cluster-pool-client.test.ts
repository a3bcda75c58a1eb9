import { expect } from 'chai';
import { GranaryClient, type Grain, type GrainContext } from '@granary/cluster';
import { silentLogger } from '@granary/testkit';
import { PoolClient } from '../src/cluster/pool-client';
import { poolKind } from '../src/cluster/pool-kind';
import { ClusterNodes } from './cluster-nodes';

/** Answers where it runs. */
class Where implements Grain {
  receive(ctx: GrainContext): unknown {
    return { member: ctx.cluster.id, index: ctx.identity };
  }
}

describe('cluster pool called from a GranaryClient (not a member)', function () {
  this.timeout(60_000);
  let nodes: ClusterNodes;
  let client: GranaryClient | undefined;
  afterEach(async () => {
    await client?.close();
    client = undefined;
    await nodes.stopAll();
  });

  it('places the workers over the members, calls them, and follows a member that joins', async () => {
    const resize = poolKind('resize', () => new Where(), { size: 4 });
    nodes = new ClusterNodes((id) => [resize.on(id)]);
    const m1 = await nodes.add('m1');
    client = await GranaryClient.connect({
      name: 'pool-test',
      gateways: [m1.address],
      topologyRefreshMs: 100,
      logger: silentLogger,
    });
    const pool = PoolClient.get(client, 'resize');
    const reply = await pool.request<{ member: string }>('hello', { timeoutMs: 5000 });
    expect(reply.member).to.equal('m1');
    expect((await pool.stats()).perMember).to.deep.equal({ m1: 4 });

    await nodes.add('m2');
    const seen = client;
    await new Promise<void>((resolve) => {
      const check = (): void => {
        if (seen.topology.members.some((m) => m.id === 'm2')) resolve();
        else setTimeout(check, 50);
      };
      check();
    });
    await pool.request('hello', { timeoutMs: 5000 }); // the new topology is noticed on a call
    expect((await pool.stats()).perMember).to.deep.equal({ m1: 2, m2: 2 });
  });
});

import { expect } from 'chai';
import { TestCluster } from '@granary/testkit';
import { Cluster } from '../../src/cluster';
import type { Grain, GrainContext } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';
import { quiet } from './memory-nodes';

/** A user's grain, tested the way the testkit README shows. */
class Cart implements Grain {
  private readonly items: string[] = [];
  receive(ctx: GrainContext): unknown {
    const m = ctx.message as { add?: string };
    if (m.add) this.items.push(m.add);
    return [...this.items];
  }
}

describe('TestCluster (in-process nodes through a start function)', function () {
  this.timeout(20_000);
  const table = new MemoryClusterTable();
  const clusters = new Map<string, Cluster>();
  let tc: TestCluster;

  before(async () => {
    tc = await TestCluster.start({
      size: 3,
      startNode: async ({ id }) => {
        const c = await Cluster.start({
          name: 'shop',
          id,
          provider: new MemoryProvider(table, { ttlMs: 1000 }),
          kinds: [kind('cart', () => new Cart(), { shardCount: 16 })],
          remote: { host: '127.0.0.1', port: 0 },
          logger: quiet,
        });
        clusters.set(id, c);
        return {
          topology: () => c.topology,
          stop: () => c.shutdown(),
          kill: () => c.shutdown({ graceful: false }),
        };
      },
    });
  });
  after(() => tc.stop());

  it('starts the nodes and waits until they agree on the topology', () => {
    const versions = tc.nodes.map((n) => clusters.get(n.id)!.topology.version);
    expect(new Set(versions).size).to.equal(1);
    expect(clusters.get('node-0')!.topology.members.map((m) => m.id)).to.deep.equal([
      'node-0',
      'node-1',
      'node-2',
    ]);
  });

  it('a grain keeps its state across a graceful leave of another node, and addNode joins a new one', async () => {
    const c0 = clusters.get('node-0')!;
    await c0.request('cart', 'alice', { add: 'apple' });
    const owner = c0.ownerOf('cart', c0.shardOf('cart', 'alice'))!.id;
    const other = tc.nodes.find((n) => n.id !== owner && n.id !== 'node-0')!;
    await tc.stopNode(other);
    await tc.waitForConvergence();
    expect(await c0.request('cart', 'alice', {})).to.deep.equal(['apple']);
    const added = await tc.addNode();
    expect(tc.live.map((n) => n.id)).to.include(added.id);
    expect(clusters.get(added.id)!.topology.members.map((m) => m.id)).to.not.include(other.id);
  });

  it('pause/resume are refused for in-process nodes with a clear error', () => {
    expect(() => tc.pause(tc.nodes[0]!)).to.throw(/only child-process nodes/);
  });
});

import { expect } from 'chai';
import { GranaryClient, type Grain, type GrainContext } from '@granary/cluster';
import { InvalidOptionError } from '@granary/core';
import { silentLogger } from '@granary/testkit';
import { PoolClient } from '../src/cluster/pool-client';
import { poolKind } from '../src/cluster/pool-kind';
import {
  control,
  INVENTORY_ID,
  memberKind,
  type Inventory,
} from '../src/cluster/internal/pool-protocol';
import { ClusterNodes } from './cluster-nodes';

class Where implements Grain {
  receive(ctx: GrainContext): unknown {
    return ctx.cluster.id;
  }
}

/** Polls `check` every 50 ms until it holds; rejects after 10 s (a loaded CI machine). */
async function pollUntil(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('PoolClient audit: worker copies started through an older placement end', function () {
  this.timeout(60_000);
  let nodes: ClusterNodes | undefined;
  let lagging: GranaryClient | undefined;
  afterEach(async () => {
    await lagging?.close();
    lagging = undefined;
    await nodes?.stopAll();
    nodes = undefined;
  });

  /** Workers running on each member, as its inventory reports them. */
  async function running(): Promise<Record<string, number[]>> {
    const out: Record<string, number[]> = {};
    for (const n of nodes!.nodes) {
      const inv = await nodes!.nodes[0]!.request<Inventory>(
        memberKind('audit', n.self!.id),
        INVENTORY_ID,
        control('inventory'),
        { timeoutMs: 3000 },
      );
      out[n.self!.id] = [...inv.workers].sort((a, b) => a - b);
    }
    return out;
  }

  const total = (r: Record<string, number[]>): number =>
    Object.values(r).reduce((n, w) => n + w.length, 0);

  it('a client whose placement is auditIntervalMs old retires the copies a lagging client started', async () => {
    const pool = poolKind('audit', () => new Where(), { size: 6 });
    const cluster = new ClusterNodes((id) => [pool.on(id)]);
    nodes = cluster;
    for (const id of ['m1', 'm2']) await cluster.add(id);
    // A caller that learns topology changes late (a GranaryClient refreshing once a minute).
    lagging = await GranaryClient.connect({
      name: 'pool-test',
      gateways: [cluster.nodes[0]!.address],
      topologyRefreshMs: 60_000,
      logger: silentLogger,
    });
    const late = lagging;
    await pollUntil(async () => late.topology.members.length === 2, 'the client sees both members');
    const stale = PoolClient.get(late, 'audit');
    const member = PoolClient.get(cluster.nodes[0]!, 'audit', { auditIntervalMs: 300 });
    await stale.request('x', { timeoutMs: 5000 });
    await member.request('x', { timeoutMs: 5000 });

    await cluster.add('m3'); // the member's client moves two workers to m3, retiring them elsewhere
    await member.request('x', { timeoutMs: 5000 });
    expect(total(await running())).to.equal(6);
    for (let i = 0; i < 12; i++) await stale.request('x', { timeoutMs: 5000 });
    const copies = await running();
    expect(total(copies), JSON.stringify(copies)).to.be.above(6); // started again where retired

    // Nothing changes in the topology now: only the audit can find and end the copies.
    await new Promise((r) => setTimeout(r, 400));
    await member.request('x', { timeoutMs: 5000 });
    let now: Record<string, number[]> = copies;
    await pollUntil(async () => {
      now = await running();
      return total(now) === 6;
    }, 'the copies end').catch(() => expect.fail(`still running: ${JSON.stringify(now)}`));
    expect(Object.values(now).map((w) => w.length)).to.deep.equal([2, 2, 2]);
  });

  it('refuses an auditIntervalMs that is not > 0, naming it', () => {
    const fake = { system: undefined, topology: { version: 0, members: [] } };
    for (const bad of [0, -1, Number.NaN]) {
      expect(() => PoolClient.get(fake as never, `bad-${bad}`, { auditIntervalMs: bad }))
        .to.throw(InvalidOptionError)
        .with.property('option', 'auditIntervalMs');
    }
  });
});

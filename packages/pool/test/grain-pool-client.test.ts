import { expect } from 'chai';
import { InvalidArgumentError } from '@granary/core';
import {
  DeadlineExceededError,
  DeadlockError,
  kind,
  type Cluster,
  type Grain,
  type GrainContext,
} from '@granary/cluster';
import { GrainPoolClient } from '../src/cluster/grain-pool-client';
import { PoolClient } from '../src/cluster/pool-client';
import { poolKind } from '../src/cluster/pool-kind';
import { ClusterNodes } from './cluster-nodes';

/** A pool worker: prices a sku, sleeps when asked, or calls back the cart that called it. */
class Pricer implements Grain {
  async receive(ctx: GrainContext): Promise<unknown> {
    const m = ctx.message as { sku?: string; sleepMs?: number; callBack?: string };
    if (m.sleepMs !== undefined) await new Promise((r) => setTimeout(r, m.sleepMs));
    if (m.callBack !== undefined) return ctx.request('cart', m.callBack, { get: true });
    return { sku: m.sku, cents: 100, worker: ctx.identity };
  }
}

/** A grain that calls the pool from its turn, through its own context. */
class Cart implements Grain {
  async receive(ctx: GrainContext): Promise<unknown> {
    const m = ctx.message as { price?: unknown; twice?: boolean; get?: boolean };
    if (m.get) return 'cart';
    const pool = PoolClient.get(ctx, 'pricer');
    const reply = await pool.request(m.price);
    if (m.twice) return { same: pool instanceof GrainPoolClient, reply };
    return reply;
  }
}

const pricers = poolKind('pricer', () => new Pricer(), { size: 2 });

describe('a cluster pool called from inside a grain (PoolClient.get(ctx, name))', function () {
  this.timeout(60_000);
  let nodes: ClusterNodes;
  let m1: Cluster;

  before(async () => {
    nodes = new ClusterNodes((id) => [pricers.on(id), kind('cart', () => new Cart())]);
    m1 = await nodes.add('m1');
    await nodes.add('m2');
  });
  after(async () => {
    await nodes?.stopAll();
  });

  it("calls a worker and uses the member's own pool client (one placement per member)", async () => {
    const reply = await m1.request<{ cents: number }>('cart', 'c-1', { price: { sku: 'a' } });
    expect(reply.cents).to.equal(100);
    const r2 = await m1.request<{ same: boolean }>('cart', 'c-1', {
      price: { sku: 'b' },
      twice: true,
    });
    expect(r2.same).to.equal(true);
    // The cart's member counted both calls on its client, the one PoolClient.get(member) gives.
    const host = nodes.nodes.find(
      (n) => n.id === m1.ownerOf('cart', m1.shardOf('cart', 'c-1'))!.id,
    )!;
    expect(PoolClient.get(host, 'pricer').ok).to.be.at.least(2);
  });

  it("carries the grain's call chain: a worker calling back the waiting cart is a deadlock at once", async () => {
    const started = Date.now();
    const err = await m1
      .request('cart', 'c-3', { price: { callBack: 'c-3' } }, { timeoutMs: 2500 })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(DeadlockError);
    expect((err as DeadlockError).chain).to.include('cart/c-3');
    expect(Date.now() - started).to.be.below(2000);
  });

  it('refuses a context whose cluster is no member, naming ctx', () => {
    const fake = { identity: 'x', cluster: { id: 'm' } } as unknown as GrainContext;
    expect(() => PoolClient.get(fake, 'pricer'))
      .to.throw(InvalidArgumentError)
      .with.property('argument', 'ctx');
  });
  it("carries the grain's deadline: a slow worker fails the grain's call at its own deadline", async () => {
    const started = Date.now();
    const err = await m1
      .request('cart', 'c-2', { price: { sleepMs: 4000 } }, { timeoutMs: 400 })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(DeadlineExceededError);
    // Not the pool call's default deadline (the member's requestTimeoutMs, 3 s).
    expect(Date.now() - started).to.be.below(2500);
  }); // last: its worker sleeps on after the cart gave up
});

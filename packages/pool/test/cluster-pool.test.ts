import { expect } from 'chai';
import type { Grain, GrainContext } from '@granary/cluster';
import { PoolClient } from '../src/cluster/pool-client';
import { poolKind } from '../src/cluster/pool-kind';
import { PoolSaturatedError } from '../src/errors';
import { ClusterNodes } from './cluster-nodes';
import { gate, rejection } from './pool-support';

/** Answers where it runs; `'hold'` waits for the shared gate first. */
class Where implements Grain {
  static hold: Promise<void> = Promise.resolve();
  receive(ctx: GrainContext): unknown {
    const reply = { member: ctx.cluster.id, activationId: ctx.activationId, index: ctx.identity };
    return ctx.message === 'hold' ? Where.hold.then(() => reply) : reply;
  }
}

type Reply = { member: string; activationId: string; index: string };

function counts(placement: Map<number, string>): number[] {
  const per = new Map<string, number>();
  for (const m of placement.values()) per.set(m, (per.get(m) ?? 0) + 1);
  return [...per.values()].sort();
}

describe('cluster pool (poolKind + PoolClient)', function () {
  this.timeout(60_000);
  let nodes: ClusterNodes;
  afterEach(() => nodes.stopAll());

  it('spreads 12 workers 4/4/4 over 3 members, then 3/3/3/3 when a 4th joins', async () => {
    const resize = poolKind('resize', () => new Where(), { size: 12 });
    nodes = new ClusterNodes((id) => [resize.on(id)]);
    for (const id of ['m1', 'm2', 'm3']) await nodes.add(id);
    const client = PoolClient.get(nodes.nodes[0]!, 'resize');
    const stats = await client.stats();
    expect(Object.values(stats.perMember).sort()).to.deep.equal([4, 4, 4]);
    expect(stats.workers.map((w) => w.index).sort((a, b) => a - b)).to.deep.equal([
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
    ]);
    const before = new Map(stats.workers.map((w) => [w.index, w]));

    await nodes.add('m4');
    await client.refresh();
    const after = await client.stats();
    expect(after.perMember).to.have.all.keys('m1', 'm2', 'm3', 'm4');
    expect(Object.values(after.perMember)).to.deep.equal([3, 3, 3, 3]);
    // Only the workers that moved to m4 got a new activation.
    const moved = after.workers.filter((w) => w.activationId !== before.get(w.index)!.activationId);
    expect(moved.map((w) => w.member)).to.deep.equal(['m4', 'm4', 'm4']);
  });

  it("a crashed member's workers come back on survivors; the others keep their activations", async () => {
    const resize = poolKind('resize', () => new Where(), { size: 12 });
    nodes = new ClusterNodes((id) => [resize.on(id)]);
    for (const id of ['m1', 'm2', 'm3', 'm4']) await nodes.add(id);
    const client = PoolClient.get(nodes.nodes[0]!, 'resize');
    const before = new Map((await client.stats()).workers.map((w) => [w.index, w]));
    expect(counts(client.placement())).to.deep.equal([3, 3, 3, 3]);

    await nodes.crash('m4');
    const reply = await client.request<Reply>('hello', { timeoutMs: 5000 });
    expect(reply.member).to.not.equal('m4');
    const after = await client.stats();
    expect(Object.values(after.perMember).sort()).to.deep.equal([4, 4, 4]);
    for (const w of after.workers) {
      const b = before.get(w.index)!;
      if (b.member === 'm4') expect(w.member, `worker ${w.index} moved`).to.not.equal('m4');
      else expect(w.activationId, `worker ${w.index} kept its activation`).to.equal(b.activationId);
    }
  });

  it('calls made while a placement runs wait for it: none goes to a crashed member', async () => {
    const resize = poolKind('resize', () => new Where(), { size: 6 });
    nodes = new ClusterNodes((id) => [resize.on(id)]);
    for (const id of ['m1', 'm2']) await nodes.add(id);
    const client = PoolClient.get(nodes.nodes[0]!, 'resize');
    await client.request('hello', { timeoutMs: 5000 });
    expect(counts(client.placement())).to.deep.equal([3, 3]);

    await nodes.crash('m2');
    // The first call places the workers again; the others, made meanwhile, must not be sent
    // through the placement it replaces (half of it on m2): they failed with NoHostError.
    const replies = await Promise.all(
      [1, 2, 3, 4].map(() => client.request<Reply>('hello', { timeoutMs: 5000 })),
    );
    expect(replies.map((r) => r.member)).to.deep.equal(['m1', 'm1', 'm1', 'm1']);
    expect((await client.stats()).perMember).to.deep.equal({ m1: 6 });
  });

  it('a member that leaves gracefully hands only its workers to the others', async () => {
    const resize = poolKind('resize', () => new Where(), { size: 12 });
    nodes = new ClusterNodes((id) => [resize.on(id)]);
    for (const id of ['m1', 'm2', 'm3']) await nodes.add(id);
    const client = PoolClient.get(nodes.nodes[0]!, 'resize');
    const before = new Map((await client.stats()).workers.map((w) => [w.index, w]));
    await nodes.leave('m3');
    const after = await client.stats();
    expect(after.perMember).to.deep.equal({ m1: 6, m2: 6 });
    for (const w of after.workers) {
      const b = before.get(w.index)!;
      if (b.member !== 'm3')
        expect(w.activationId, `worker ${w.index} stayed`).to.equal(b.activationId);
    }
  });

  it('resizes at runtime, and any member reads the same placement and stats', async () => {
    const pool = poolKind('hash', () => new Where(), { size: 6 });
    nodes = new ClusterNodes((id) => [pool.on(id)]);
    for (const id of ['m1', 'm2']) await nodes.add(id);
    const a = PoolClient.get(nodes.nodes[0]!, 'hash');
    await Promise.all([1, 2, 3, 4].map((i) => a.request(i)));
    expect(await a.resize(8)).to.equal(8);
    expect(counts(a.placement())).to.deep.equal([4, 4]);
    const b = PoolClient.get(nodes.nodes[1]!, 'hash');
    const seen = await b.stats();
    expect(seen.workers).to.have.length(8);
    expect(seen.calls).to.equal(4);
    expect(new Map(seen.workers.map((w) => [w.index, w.member]))).to.deep.equal(a.placement());
    expect(await b.resize(3)).to.equal(3);
    expect(counts(b.placement())).to.deep.equal([1, 2]);
    // 3 workers plus one inventory grain per member: the 5 retired workers are gone.
    await nodes.untilLive(3 + 2);
    // A member that joins later takes the resized size, not its poolKind's 6.
    await nodes.add('m3');
    await a.refresh();
    expect(counts(a.placement())).to.deep.equal([1, 1, 1]);
  });

  it('rejects at once with PoolSaturatedError when every worker is at maxInFlight', async () => {
    const hold = gate();
    Where.hold = hold.promise;
    const pool = poolKind('busy', () => new Where(), { size: 2, maxInFlight: 2 });
    nodes = new ClusterNodes((id) => [pool.on(id)]);
    for (const id of ['m1', 'm2']) await nodes.add(id);
    const client = PoolClient.get(nodes.nodes[0]!, 'busy');
    await client.refresh();
    const held = [1, 2, 3, 4].map(() => client.request<Reply>('hold', { timeoutMs: 10_000 }));
    const err = await rejection(client.request('one more'));
    expect(err).to.be.instanceOf(PoolSaturatedError);
    expect(err).to.include({ code: 'ERR_POOL_SATURATED', tried: 2 });
    hold.open();
    const replies = await Promise.all(held);
    // Free-first: two calls on each worker, so both members did work.
    expect(new Set(replies.map((r) => r.member)).size).to.equal(2);
    Where.hold = Promise.resolve();
  });
});

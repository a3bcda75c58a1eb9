import { expect } from 'chai';
import type { Remote } from '@granary/core';
import type { Cluster } from '../../src/cluster';
import { CallChainTooLongError, DeadlockError, GrainError } from '../../src/errors';
import { MAX_CHAIN_PATH_BYTES } from '../../src/grains/deadlock-detection';
import type { Grain, GrainContext } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { MemoryNodes } from './memory-nodes';

/** Forwards `{ hops: [kind/id, ...] }` to the next hop; the last one answers. */
class Hop implements Grain {
  async receive(ctx: GrainContext): Promise<unknown> {
    const { hops, seen } = ctx.message as { hops: string[]; seen?: number };
    if (hops.length === 0) return { seen: seen ?? 0, remaining: ctx.remainingMs };
    const [next, ...rest] = hops;
    const [k, id] = next!.split('/');
    return ctx.request(k!, id!, { hops: rest, seen: (seen ?? 0) + 1 });
  }
}

/** Like Hop, but answers the error its call failed with (by name and chain). */
class Catcher extends Hop {
  override async receive(ctx: GrainContext): Promise<unknown> {
    try {
      return await super.receive(ctx);
    } catch (err) {
      if (err instanceof DeadlockError) return { name: err.name, chain: err.chain };
      throw err;
    }
  }
}

describe('call chains and deadlock detection', function () {
  this.timeout(20_000);
  const nodes = new MemoryNodes(() => [
    kind('hop', () => new Hop(), { shardCount: 16 }),
    kind('rhop', () => new Hop(), { shardCount: 16, reentrant: true }),
    kind('catcher', () => new Catcher(), { shardCount: 16 }),
  ]);
  before(async () => {
    await nodes.add('d1');
    await nodes.add('d2');
  });
  after(() => nodes.stopAll());

  it('A -> B -> A among non-reentrant grains rejects with DeadlockError well before the timeout', async () => {
    const t0 = Date.now();
    const err = await nodes.nodes[0]!.request(
      'hop',
      'A',
      { hops: ['hop/B', 'hop/A'] },
      { timeoutMs: 5000 },
    ).catch((e: unknown) => e);
    const took = Date.now() - t0;
    // B's call to A fails with DeadlockError; B and then A let it through to the caller.
    expect(err).to.be.instanceOf(DeadlockError);
    expect((err as DeadlockError).chain).to.deep.equal(['hop/A', 'hop/B', 'hop/A']);
    expect(took).to.be.below(1000);
  });

  it('the outermost caller gets DeadlockError with the chain when every hop is on another member', async () => {
    const [d1, d2] = nodes.nodes as [Cluster, Cluster];
    const on = (member: Cluster, prefix: string): string => {
      for (let i = 0; ; i++) {
        const id = `${prefix}${i}`;
        if (d1.ownerOf('hop', d1.shardOf('hop', id))?.id === member.id) return id;
      }
    };
    // d1 -> A (on d2) -> B (on d1) -> C (on d2) -> A: each call crosses between the members.
    const [a, b, c] = [on(d2, 'xa'), on(d1, 'xb'), on(d2, 'xc')];
    const err = await d1
      .request('hop', a, { hops: [`hop/${b}`, `hop/${c}`, `hop/${a}`] }, { timeoutMs: 5000 })
      .catch((e: unknown) => e);
    expect(DeadlockError.is(err), String(err)).to.equal(true);
    expect((err as DeadlockError).chain).to.deep.equal([
      `hop/${a}`,
      `hop/${b}`,
      `hop/${c}`,
      `hop/${a}`,
    ]);
  });

  it('a grain calling itself is a deadlock too', async () => {
    const err = await nodes.nodes[1]!.request(
      'hop',
      'self',
      { hops: ['hop/self'] },
      { timeoutMs: 5000 },
    ).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(DeadlockError);
    expect((err as DeadlockError).chain).to.deep.equal(['hop/self', 'hop/self']);
  });

  it('a reentrant kind allows the cycle', async () => {
    const reply = await nodes.nodes[0]!.request<{ seen: number }>(
      'rhop',
      'A',
      { hops: ['rhop/B', 'rhop/A', 'rhop/B'] },
      { timeoutMs: 5000 },
    );
    expect(reply.seen).to.equal(3);
  });

  it('the deadline travels down the chain: the last grain sees less time than the first had', async () => {
    const reply = await nodes.nodes[0]!.request<{ remaining: number }>(
      'hop',
      'X',
      { hops: ['hop/Y', 'hop/Z'] },
      { timeoutMs: 2000 },
    );
    expect(reply.remaining).to.be.above(0).and.at.most(2000);
  });

  it('the grain that makes the cyclic call gets a DeadlockError naming the chain', async () => {
    const reply = await nodes.nodes[1]!.request<{ name: string; chain: string[] }>(
      'catcher',
      'A',
      { hops: ['catcher/B', 'catcher/A'] },
      { timeoutMs: 5000 },
    );
    expect(reply).to.deep.equal({
      name: 'DeadlockError',
      chain: ['catcher/A', 'catcher/B', 'catcher/A'],
    });
  });

  it('fails a chain too long to carry with CallChainTooLongError; the link between the members stays up', async () => {
    // 24 nested calls of 900-byte identities: a 21 KiB chain, over the receiver's header limit.
    const hops = Array.from({ length: 24 }, (_, i) => `hop/${i}-${'x'.repeat(900)}`);
    const err = await nodes.nodes[0]!.request('hop', 'start', { hops }, { timeoutMs: 5000 }).catch(
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(GrainError);
    expect((err as GrainError).message).to.contain(`over ${MAX_CHAIN_PATH_BYTES} bytes`);
    expect(new CallChainTooLongError(9, MAX_CHAIN_PATH_BYTES).code).to.equal(
      'ERR_CALL_CHAIN_TOO_LONG',
    );
    for (const n of nodes.nodes) {
      expect((n.system.remote as Remote).stats.limitExceeded, n.id).to.equal(0);
    }
    // Chains of ordinary length cross both members as before.
    const short = Array.from({ length: 8 }, (_, i) => `hop/s${i}`);
    expect(await nodes.nodes[1]!.request('hop', 'start', { hops: short })).to.include({ seen: 8 });
  });
});

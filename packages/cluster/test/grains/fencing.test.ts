import { expect } from 'chai';
import type { Grain, GrainContext } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import type { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryNodes } from './memory-nodes';

const TTL_MS = 600;
const deliveries: Array<{ member: string; at: number }> = [];

class Recorder implements Grain {
  receive(ctx: GrainContext): unknown {
    deliveries.push({ member: ctx.cluster.id, at: performance.now() });
    return ctx.cluster.id;
  }
}

describe('fencing (per-turn canServe)', function () {
  this.timeout(20_000);
  const nodes = new MemoryNodes(
    () => [kind('rec', () => new Recorder(), { shardCount: 16, idleTimeoutMs: 60_000 })],
    { ttlMs: TTL_MS },
  );
  before(async () => {
    await nodes.add('fa');
    await nodes.add('fb');
  });
  after(() => nodes.stopAll());

  it('a member whose lease lapses stops delivering at once; calls move to the survivor without failing', async () => {
    const [a, b] = nodes.nodes as [(typeof nodes.nodes)[0], (typeof nodes.nodes)[0]];
    const id = Array.from({ length: 200 }, (_, i) => `r-${i}`).find(
      (i) => a.ownerOf('rec', a.shardOf('rec', i))?.id === 'fb',
    )!;
    const shard = b.shardOf('rec', id);
    expect(await a.request('rec', id, 'x')).to.equal('fb');
    (b.provider as MemoryProvider).crash(); // keep-alives stop: b's lease lapses, no event tells it
    let fencedAt = Infinity;
    const answers: string[] = [];
    const t0 = Date.now();
    while (Date.now() - t0 < TTL_MS * 3) {
      if (fencedAt === Infinity && !b.canServe('rec', shard)) fencedAt = performance.now();
      answers.push(await a.request<string>('rec', id, 'x', { timeoutMs: TTL_MS * 4 }));
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(fencedAt).to.be.below(Infinity);
    const late = deliveries.filter((d) => d.member === 'fb' && d.at > fencedAt);
    expect(late, 'deliveries on the fenced member').to.deep.equal([]);
    expect(answers.at(-1)).to.equal('fa');
    nodes.nodes.splice(1, 1); // b is a crashed member now: not shut down gracefully
    await b.system.shutdown();
  });
});

import { expect } from 'chai';
import type { Grain, GrainContext } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import type { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { overlaps } from './activation-overlaps';
import { MemoryNodes } from './memory-nodes';

const GRAINS = 100;
const CALLERS = 300;
const TIMEOUT_MS = 3000;

class Echo implements Grain {
  private n = 0;
  async onDeactivate(): Promise<void> {
    await new Promise((r) => setTimeout(r, 5)); // a drain must wait for this
  }
  receive(ctx: GrainContext): unknown {
    return { n: ++this.n, activationId: ctx.activationId };
  }
}

interface LoadResult {
  ok: number;
  failed: Error[];
  late: number;
}

/** Calls that must succeed between two steps of a test: the load runs while the step happens. */
const CALLS_PER_STEP = 500;

/**
 * CALLERS loops calling random grains until stop() resolves; records every outcome.
 * `answered(n)` resolves once `n` more calls have succeeded (the test waits on the load's
 * progress, not on a fixed time).
 */
function load(
  nodes: MemoryNodes,
  stopped: ReadonlySet<unknown>,
): { stop: () => Promise<LoadResult>; answered: (n: number) => Promise<void> } {
  const result: LoadResult = { ok: 0, failed: [], late: 0 };
  let running = true;
  const waiters: Array<{ at: number; resolve: () => void }> = [];
  const succeeded = (): void => {
    result.ok++;
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (result.ok >= waiters[i]!.at) waiters.splice(i, 1)[0]!.resolve();
    }
  };
  const loops = Array.from({ length: CALLERS }, async (_, i) => {
    while (running) {
      const live = nodes.nodes.filter((n) => !stopped.has(n));
      const caller = live[i % live.length]!;
      const t0 = Date.now();
      try {
        await caller.request('echo', `g-${Math.floor(Math.random() * GRAINS)}`, 'hi', {
          timeoutMs: TIMEOUT_MS,
        });
        succeeded();
      } catch (err) {
        if ((err as { code?: string }).code === 'ERR_CLUSTER_STOPPED') continue;
        result.failed.push(err as Error);
      }
      if (Date.now() - t0 > TIMEOUT_MS + 100) result.late++;
    }
  });
  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
      return result;
    },
    answered: (n) => new Promise((resolve) => waiters.push({ at: result.ok + n, resolve })),
  };
}

describe('rebalance, graceful leave and failover under load (MemoryProvider)', function () {
  this.timeout(60_000);
  let nodes: MemoryNodes;
  beforeEach(async () => {
    nodes = new MemoryNodes(() => [kind('echo', () => new Echo(), { shardCount: 64 })], {
      ttlMs: 1500,
    });
    await nodes.add('r1');
    await nodes.add('r2');
    await nodes.add('r3');
  });
  afterEach(() => nodes.stopAll());

  it('a 4th member joins, then one leaves gracefully: no call fails, activations never overlap', async () => {
    const stopped = new Set<unknown>();
    const l = load(nodes, stopped);
    await l.answered(CALLS_PER_STEP);
    await nodes.add('r4');
    await l.answered(CALLS_PER_STEP);
    const leaving = nodes.nodes[1]!;
    stopped.add(leaving);
    await leaving.shutdown();
    expect(leaving.activationCount()).to.equal(0);
    await l.answered(CALLS_PER_STEP);
    const res = await l.stop();
    expect(res.failed.map((e) => `${e.name}: ${e.message}`)).to.deep.equal([]);
    expect(res.late).to.equal(0);
    expect(res.ok).to.be.greaterThan(1000);
    expect(overlaps(nodes.log)).to.deep.equal([]);
    const moved = nodes.log.filter((e) => e.type === 'deactivate' && e.reason === 'rebalance');
    expect(moved.length, 'grains moved on join').to.be.greaterThan(0);
  });

  it('a crashed member: its grains answer from survivors after its TTL; others keep their activation', async () => {
    const c = nodes.nodes[0]!;
    const before = new Map<string, { id: string; member: string }>();
    for (let i = 0; i < GRAINS; i++) {
      const r = await c.request<{ activationId: string }>('echo', `g-${i}`, 'hi');
      const ev = nodes.log.find((e) => e.activationId === r.activationId)!;
      before.set(`g-${i}`, { id: r.activationId, member: ev.member });
    }
    const victim = nodes.nodes[2]!;
    // A crash: the member stops renewing its lease and its remote goes away without goodbye.
    (victim.provider as MemoryProvider).crash();
    await victim.system.shutdown();
    nodes.nodes.splice(2, 1);
    const t0 = Date.now();
    const replies = await Promise.all(
      [...before.keys()].map((id) =>
        c.request<{ activationId: string }>('echo', id, 'hi', { timeoutMs: 3000 }),
      ),
    );
    expect(Date.now() - t0).to.be.below(1500 + 1000);
    // Each is the grain's own answer from a survivor (a failed attempt to the crashed member
    // is retried, never handed back as the value).
    for (const r of replies) {
      expect(r).to.not.be.instanceOf(Error);
      const ev = nodes.log.find((e) => e.activationId === r.activationId);
      expect(ev, `activation ${String(r.activationId)}`).to.not.equal(undefined);
      expect(ev!.member).to.not.equal('r3');
    }
    for (const [id, b] of before) {
      const r = await c.request<{ activationId: string }>('echo', id, 'hi');
      if (b.member !== 'r3') expect(r.activationId, `${id} kept its activation`).to.equal(b.id);
      else expect(r.activationId).to.not.equal(b.id);
    }
  });
});

import * as path from 'node:path';
import { DeadlineExceededError, GrainError, threaded } from '@granary/cluster';
import { expect } from 'chai';
import { PoolClient } from '../src/cluster/pool-client';
import { poolKind } from '../src/cluster/pool-kind';
import { ClusterNodes } from './cluster-nodes';
import type { FaultJob } from './fixtures/fault-job';

const JOB = path.join(__dirname, 'fixtures/fault-job.js');

/** How a job ended, and how long it took. */
async function settle(p: Promise<unknown>): Promise<{ ok: boolean; v: unknown; ms: number }> {
  const t0 = Date.now();
  return p.then(
    (v) => ({ ok: true, v, ms: Date.now() - t0 }),
    (v: unknown) => ({ ok: false, v, ms: Date.now() - t0 }),
  );
}

describe('a threaded pool kind whose worker threads fail (one member, one thread)', function () {
  this.timeout(30_000);
  let nodes: ClusterNodes;
  let client: PoolClient;

  beforeEach(async () => {
    // One thread: the jobs behind a failed one have no other thread to run on.
    const jobs = poolKind('jobs', threaded({ module: JOB, threads: 1 }), { size: 4 });
    nodes = new ClusterNodes((id) => [jobs.on(id)]);
    await nodes.add('m1');
    client = PoolClient.get(nodes.nodes[0]!, 'jobs');
  });
  afterEach(() => nodes.stopAll());

  async function runBehind(first: FaultJob, firstTimeoutMs: number) {
    const failed = settle(client.request(first, { timeoutMs: firstTimeoutMs }));
    const behind = Array.from({ length: 3 }, (_, n) =>
      settle(client.request({ op: 'echo', n } satisfies FaultJob, { timeoutMs: 5000 })),
    );
    return { failed: await failed, behind: await Promise.all(behind) };
  }

  it('a job whose thread exits fails with ERR_THREAD_CRASHED; the jobs queued behind it run on a new thread', async () => {
    const { failed, behind } = await runBehind({ op: 'exit' }, 5000);
    expect(failed.v)
      .to.be.instanceOf(GrainError)
      .and.include({ originalCode: 'ERR_THREAD_CRASHED' });
    for (const b of behind) {
      expect(b.ok, String(b.v)).to.equal(true);
      expect(b.ms, 'not held to the 5 s deadline').to.be.below(2500);
    }
    expect(nodes.nodes[0]!.topology.members.map((m) => m.id)).to.deep.equal(['m1']);
    // No worker answered the crashed job: the client's counters (granary.pool.calls) say so.
    expect({ ok: client.ok, failed: client.failed }).to.deep.equal({ ok: 3, failed: 1 });
  });

  it('a job that hangs fails at its deadline; the jobs queued behind it run on a new thread', async () => {
    const { failed, behind } = await runBehind({ op: 'hang' }, 400);
    expect(failed.v).to.be.instanceOf(DeadlineExceededError);
    for (const b of behind) {
      expect(b.ok, String(b.v)).to.equal(true);
      expect(b.ms).to.be.below(2500);
    }
  });
});

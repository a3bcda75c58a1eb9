import * as path from 'node:path';
import { expect } from 'chai';
import { ThreadCrashedError, ThreadTaskAbortedError } from '../../src/threads/errors';
import { ThreadPool, type ThreadCall } from '../../src/threads/thread-pool';
import { resolveThreadedOptions } from '../../src/threads/threaded-options';

const TASK = path.join(__dirname, 'fixtures/compute-task.js');

/** A call whose deadline aborts it, as a threaded grain's turn passes it. */
function callOf(identity: string, deadlineInMs: number): ThreadCall {
  return {
    kind: 'compute',
    identity,
    activationId: 'a',
    deadline: Date.now() + deadlineInMs,
    signal: AbortSignal.timeout(deadlineInMs),
  };
}

/** How a promise ended, and when (ms after `t0`). */
async function settle(
  p: Promise<unknown>,
  t0: number,
): Promise<{ ok: boolean; v: unknown; ms: number }> {
  return p.then(
    (v) => ({ ok: true, v, ms: Date.now() - t0 }),
    (v: unknown) => ({ ok: false, v, ms: Date.now() - t0 }),
  );
}

describe('ThreadPool', function () {
  this.timeout(20_000);
  let pool: ThreadPool;

  beforeEach(() => {
    // One thread: the tasks behind a failed one have no other thread to run on.
    pool = new ThreadPool(resolveThreadedOptions({ module: TASK, threads: 1 }));
  });
  afterEach(() => pool.close());

  describe('run', () => {
    it('runs the tasks queued behind one whose thread died, on a new thread, with no further call', async () => {
      const t0 = Date.now();
      const dead = settle(pool.run({ op: 'exit' }, callOf('x', 6000)), t0);
      const behind = settle(pool.run({ op: 'echo', v: 1 }, callOf('y', 6000)), t0);
      const crashed = await dead;
      expect(crashed.v).to.be.instanceOf(ThreadCrashedError);
      expect((crashed.v as Error).message).to.match(/worker thread running the task died/);
      const next = await behind;
      expect(next.ok, String(next.v)).to.equal(true);
      expect(next.v).to.deep.include({ v: 1, identity: 'y' });
      expect(next.ms, 'answered by a replacement thread, not held to its 6 s deadline').to.be.below(
        5000,
      );
    });

    it('runs the tasks queued behind a hung one once its deadline has ended its thread', async () => {
      const t0 = Date.now();
      const hung = settle(pool.run({ op: 'spin', ms: 30_000 }, callOf('h', 300)), t0);
      const behind = settle(pool.run({ op: 'echo', v: 2 }, callOf('z', 6000)), t0);
      const aborted = await hung;
      expect(aborted.v).to.be.instanceOf(ThreadTaskAbortedError);
      const next = await behind;
      expect(next.ok, String(next.v)).to.equal(true);
      expect(next.v).to.deep.include({ v: 2, identity: 'z' });
      expect(next.ms).to.be.below(5000);
      expect(pool.threadCount).to.equal(1);
    });
  });
});

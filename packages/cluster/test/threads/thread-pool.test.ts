import * as path from 'node:path';
import type { EventEmitter } from 'node:events';
import { recordingLogger } from '@granary/testkit';
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

  describe('failures outside a task', () => {
    it('reports a thread error with no task on it to the logger and keeps serving', async () => {
      const { logger, lines } = recordingLogger();
      const logged = new ThreadPool(resolveThreadedOptions({ module: TASK, threads: 1 }), logger);
      try {
        // What piscina does when a thread fails while idle; with no listener the emit throws
        // (an unhandled 'error' event), which in a member ends the process.
        const emitter = (logged as unknown as { piscina: EventEmitter }).piscina;
        expect(() =>
          emitter.emit('error', new Error('thread failed after its task')),
        ).not.to.throw();
        expect(lines.map((l) => `${l.level} ${l.msg}`)).to.deep.equal([
          'error a worker thread failed outside any task; it is replaced',
        ]);
        const reply = await logged.run({ op: 'echo', v: 3 }, callOf('e', 6000));
        expect(reply).to.deep.include({ v: 3 });
      } finally {
        await logged.close();
      }
    });
  });

  describe('maxHeapMb', () => {
    it('ends a thread that outgrows it with ThreadCrashedError, soon; the next task runs', async () => {
      const bounded = new ThreadPool(
        resolveThreadedOptions({ module: TASK, threads: 1, maxHeapMb: 64 }),
      );
      try {
        const t0 = Date.now();
        const grown = await settle(bounded.run({ op: 'grow' }, callOf('g', 15_000)), t0);
        expect(grown.v).to.be.instanceOf(ThreadCrashedError);
        expect(grown.ms, 'stopped at 64 MiB, not at the process heap limit').to.be.below(5000);
        const reply = await bounded.run({ op: 'echo', v: 4 }, callOf('n', 6000));
        expect(reply).to.deep.include({ v: 4 });
      } finally {
        await bounded.close();
      }
    });

    it('is refused below 16 MiB or when not a number, naming the option', () => {
      for (const maxHeapMb of [8, Number.NaN, '64' as unknown as number]) {
        expect(() => resolveThreadedOptions({ module: TASK, maxHeapMb }))
          .to.throw(/maxHeapMb/)
          .with.property('code', 'ERR_INVALID_OPTION');
      }
    });
  });
});

import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { InvalidOptionError } from '@granary/core';
import { expect } from 'chai';
import type { Cluster } from '../../src/cluster';
import { DeadlineExceededError, GrainError } from '../../src/errors';
import { kind } from '../../src/grains/kind';
import { threaded } from '../../src/threads/threaded';
import { ThreadPool } from '../../src/threads/thread-pool';
import { resolveThreadedOptions, type ThreadedOptions } from '../../src/threads/threaded-options';
import { MemoryNodes } from '../grains/memory-nodes';
import type { Spun } from './fixtures/compute-task';

const TASK = path.join(__dirname, 'fixtures/compute-task.js');
const THREADS = 2;

/** Longest gap between 10 ms interval ticks on this loop while `work` runs. */
async function loopStall<T>(work: Promise<T>): Promise<{ result: T; stallMs: number }> {
  let last = Date.now();
  let worst = 0;
  const tick = setInterval(() => {
    const now = Date.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 10);
  try {
    const result = await work;
    return { result, stallMs: Math.max(worst, Date.now() - last) };
  } finally {
    clearInterval(tick);
  }
}

/** Most spans running at one instant. */
function maxOverlap(spans: Spun[]): number {
  const edges = spans.flatMap((s) => [
    { at: s.from, d: 1 },
    { at: s.to, d: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.d - b.d);
  let now = 0;
  let max = 0;
  for (const e of edges) max = Math.max(max, (now += e.d));
  return max;
}

describe('threaded kinds (handlers in worker threads)', function () {
  this.timeout(30_000);
  let nodes: MemoryNodes;
  let a: Cluster;

  before(async () => {
    nodes = new MemoryNodes(() => [
      kind('compute', threaded({ module: TASK, threads: THREADS }), { shardCount: 4 }),
    ]);
    a = await nodes.add('a');
  });
  after(() => nodes.stopAll());

  it('answers a call with the handler’s reply, computed in a worker thread', async () => {
    const reply = await a.request<{ v: number; kind: string; identity: string; thread: number }>(
      'compute',
      'x',
      { op: 'echo', v: { deep: [1, 2] } },
    );
    expect(reply).to.deep.include({ v: { deep: [1, 2] }, kind: 'compute', identity: 'x' });
    expect(reply.thread).to.be.greaterThan(0); // threadId 0 is the main thread
  });

  it('keeps the member’s event loop free while a 600 ms CPU-bound turn runs', async () => {
    const { result, stallMs } = await loopStall(
      a.request<Spun>('compute', 'spin-1', { op: 'spin', ms: 600 }, { timeoutMs: 5000 }),
    );
    expect(result.to - result.from).to.be.at.least(600);
    expect(stallMs, 'longest gap between 10 ms ticks (the turn itself is 600 ms)').to.be.below(450);
  });

  it(`runs at most ${THREADS} turns at once on a member; the rest wait their turn`, async () => {
    const spans = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        a.request<Spun>('compute', `par-${i}`, { op: 'spin', ms: 150 }, { timeoutMs: 10_000 }),
      ),
    );
    expect(maxOverlap(spans)).to.equal(THREADS);
    expect(new Set(spans.map((s) => s.thread)).size).to.be.at.least(THREADS);
  });

  it('gives the caller the handler’s error as GrainError with its name and code', async () => {
    const err = await a.request('compute', 'e', { op: 'throw', v: 'x' }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(GrainError);
    expect(err).to.include({
      originalName: 'RangeError',
      originalCode: 'ERR_BAD_INPUT',
      message: 'bad x',
    });
  });

  it('fails a message or a reply that cannot cross the thread boundary with ERR_THREAD_CLONE', async () => {
    // A function could not reach a remote member either: the local member passes it as it is.
    const message = await a
      .request('compute', 'c', { op: 'echo', v: () => 1 })
      .catch((e: unknown) => e);
    expect(message).to.be.instanceOf(GrainError).and.include({ originalCode: 'ERR_THREAD_CLONE' });
    expect((message as Error).message).to.match(/message cannot cross/);
    const reply = await a.request('compute', 'c', { op: 'function' }).catch((e: unknown) => e);
    expect(reply).to.be.instanceOf(GrainError).and.include({ originalCode: 'ERR_THREAD_CLONE' });
    expect((reply as Error).message).to.match(/reply cannot cross/);
  });

  it('stops a turn at its deadline: the caller gets DeadlineExceededError, the thread is replaced at once', async () => {
    const t0 = Date.now();
    const err = await a
      .request('compute', 'stuck', { op: 'spin', ms: 20_000 }, { timeoutMs: 300 })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(DeadlineExceededError);
    // The same activation answers the next call well before the 20 s spin would have ended.
    const next = await a.request('compute', 'stuck', { op: 'echo', v: 1 }, { timeoutMs: 5000 });
    expect(next).to.deep.include({ v: 1 });
    expect(Date.now() - t0).to.be.below(5000);
  });

  it('tells an awaiting handler its deadline through ctx.signal (the deadline crosses the boundary)', async () => {
    // The pool alone, with no abort from the main side: only the thread's own signal can fire.
    const pool = new ThreadPool(resolveThreadedOptions({ module: TASK, threads: 1 }));
    try {
      const t0 = Date.now();
      const reply = await pool.run(
        { op: 'wait-deadline' },
        { kind: 'compute', identity: 'w', activationId: 'x', deadline: t0 + 200 },
      );
      expect(reply).to.deep.equal({ aborted: true, remaining: 0 });
      expect(Date.now() - t0).to.be.at.least(190);
    } finally {
      await pool.close();
    }
  });

  it('fails a call whose thread died with ERR_THREAD_CRASHED; the next call gets a new thread', async () => {
    const err = await a.request('compute', 'x2', { op: 'exit' }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(GrainError).and.include({ originalCode: 'ERR_THREAD_CRASHED' });
    const next = await a.request('compute', 'x2', { op: 'echo', v: 2 });
    expect(next).to.deep.include({ v: 2 });
  });

  it('rejects bad options naming them', () => {
    expect(() => threaded({ module: '' })).to.throw(InvalidOptionError, /module/);
    expect(() => threaded({ module: TASK, threads: 0 })).to.throw(InvalidOptionError, /threads/);
  });

  it('refuses an option it does not know, naming the one likely meant', () => {
    // From JavaScript or a config object, { maxHeapMB } left every thread's heap unbounded.
    const options = { module: TASK, maxHeapMB: 512 } as unknown as ThreadedOptions;
    expect(() => threaded(options))
      .to.throw(InvalidOptionError, /'maxHeapMb'/)
      .with.property('option', 'maxHeapMB');
  });

  it('leaves piscina unloaded in a process whose members host no threaded kind', () => {
    // A fresh node: this suite's own threaded kind has loaded it here.
    const index = path.join(__dirname, '../../src/index.js');
    // Written as plain text: console.log would colour a boolean where FORCE_COLOR is set (CI).
    const script = `require(${JSON.stringify(index)});
      const loaded = Object.keys(require.cache).some((p) => /[\\/]piscina[\\/]/.test(p));
      process.stdout.write(String(loaded));`;
    expect(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }).trim()).to.equal(
      'false',
    );
    expect(Object.keys(require.cache).some((p) => /[\\/]piscina[\\/]/.test(p))).to.equal(true);
  });
});

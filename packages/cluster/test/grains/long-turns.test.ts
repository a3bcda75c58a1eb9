import { performance } from 'node:perf_hooks';
import { expect } from 'chai';
import { Cluster } from '../../src/cluster';
import { DeadlineExceededError, TurnTimeoutError } from '../../src/errors';
import type { Grain, GrainContext } from '../../src/grains/grain';
import type { ActivationEvent } from '../../src/grains/grains-options';
import { kind } from '../../src/grains/kind';
import type { ClusterLogger } from '../../src/internal/logger';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';
import { waitForClusters } from '../cluster/converge';

/** What a Slow grain is asked: wait `ms` (awaiting), spin `spin` ms, or wait for the gate. */
type SlowOp = { wait?: number; spin?: number; gate?: boolean; n?: number };

/** Released by the test: turns that wait for the gate are stuck until then. */
let release: () => void = () => undefined;
let gate = new Promise<void>((resolve) => (release = resolve));

class Slow implements Grain {
  async receive(ctx: GrainContext): Promise<unknown> {
    const op = ctx.message as SlowOp;
    if (op.spin !== undefined) {
      const t0 = performance.now();
      while (performance.now() - t0 < op.spin);
    }
    if (op.wait !== undefined) await new Promise((r) => setTimeout(r, op.wait));
    if (op.gate === true) await gate;
    return { n: op.n, activationId: ctx.activationId };
  }
}

/** Same, but synchronous (a turn that returns no promise). */
class SyncSlow implements Grain {
  receive(ctx: GrainContext): unknown {
    // The monotonic clock the turn is measured on (Date.now() can read 1 ms short of it).
    const t0 = performance.now();
    while (performance.now() - t0 < (ctx.message as SlowOp).spin!);
    return 'done';
  }
}

interface Logged {
  level: string;
  obj: Record<string, unknown>;
  msg: string | undefined;
}

describe('long and stuck turns (longTurnMs, turnTimeoutMs)', function () {
  this.timeout(30_000);
  const logged: Logged[] = [];
  const log: ActivationEvent[] = [];
  const logger: ClusterLogger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (obj, msg) =>
      void logged.push({ level: 'warn', obj: obj as Record<string, unknown>, msg }),
    error: (obj, msg) =>
      void logged.push({ level: 'error', obj: obj as Record<string, unknown>, msg }),
    child: () => logger,
  };
  const table = new MemoryClusterTable();
  let a: Cluster;
  let b: Cluster;
  const start = (id: string, kinds: ReturnType<typeof kind>[]): Promise<Cluster> =>
    Cluster.start({
      name: 'turns',
      id,
      provider: new MemoryProvider(table, { ttlMs: 5000 }),
      kinds,
      remote: { host: '127.0.0.1', port: 0 },
      logger,
      onActivation: (e) => log.push(e),
    });

  before(async () => {
    a = await start('a', [
      kind('slow', () => new Slow(), { shardCount: 1, longTurnMs: 100 }),
      kind('sync-slow', () => new SyncSlow(), { shardCount: 1, longTurnMs: 100 }),
      kind('stuck', () => new Slow(), { shardCount: 1, turnTimeoutMs: 300 }),
    ]);
    b = await start('b', []); // a caller on another member: errors cross the wire
    await waitForClusters(
      [a, b],
      () => a.canServe('slow', 0) && b.topology.members.length === 2,
      'joined',
    );
  });
  after(async () => {
    release();
    await Promise.all([a, b].map((c) => c.shutdown({ graceful: false })));
  });

  const longLines = (): Logged[] =>
    logged.filter((l) => /longer than longTurnMs/.test(l.msg ?? ''));

  it('logs a long awaiting turn once per activation with kind, identity and duration, and counts every one', async () => {
    await b.request('slow', 'x', { wait: 250 });
    await b.request('slow', 'x', { wait: 250 });
    await b.request('slow', 'y', { wait: 250 });
    await b.request('slow', 'x', { wait: 1 }); // short: neither logged nor counted
    expect(a.turnStats('slow').longTurns).to.equal(3);
    const lines = longLines().filter((l) => l.obj.kind === 'slow');
    expect(lines.map((l) => l.obj.identity)).to.deep.equal(['x', 'y']);
    expect(lines[0]!.obj.durationMs as number).to.be.at.least(100);
    expect(lines[0]!.obj).to.include.keys('activationId');
  });

  it('logs a long synchronous turn when it returns', async () => {
    await b.request('sync-slow', 's', { spin: 200 });
    expect(a.turnStats('sync-slow').longTurns).to.equal(1);
    const line = longLines().find((l) => l.obj.kind === 'sync-slow')!;
    expect(line.obj).to.include({ identity: 's', running: false });
    expect(line.obj.durationMs as number).to.be.at.least(200);
  });

  it('fails the calls queued behind a stuck turn fast with TurnTimeoutError, and new ones while it runs; one activation throughout; a new one after the turn ends', async () => {
    const t0 = Date.now();
    const stuck = b.request('stuck', 'g', { gate: true, n: 0 }, { timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 50));
    const queued = [1, 2].map((n) =>
      b.request('stuck', 'g', { n }, { timeoutMs: 10_000 }).catch((e: unknown) => e),
    );
    const errors = await Promise.all(queued);
    for (const err of errors) {
      expect(err).to.be.instanceOf(TurnTimeoutError);
      expect(err).to.include({ kind: 'stuck', identity: 'g', turnTimeoutMs: 300 });
    }
    expect(Date.now() - t0, 'failed at the turn timeout, not at their 10 s deadline').to.be.below(
      2000,
    );
    const late = await a.request('stuck', 'g', { n: 3 }).catch((e: unknown) => e);
    expect(late, 'a call arriving while the turn still runs').to.be.instanceOf(TurnTimeoutError);
    expect(a.turnStats('stuck').timedOutTurns).to.equal(1);
    const activations = (): ActivationEvent[] => log.filter((e) => e.kind === 'stuck');
    expect(activations().map((e) => e.type)).to.deep.equal(['activate']);

    release();
    const first = (await stuck) as { n: number; activationId: string };
    expect(first.n).to.equal(0); // the stuck turn itself finishes normally
    await waitForClusters([a], () => activations().length === 2, 'the stuck activation ended');
    expect(activations()[1]).to.include({ type: 'deactivate', reason: 'turn-timeout' });
    const next = (await b.request('stuck', 'g', { n: 4 })) as { n: number; activationId: string };
    expect(next.n).to.equal(4);
    expect(next.activationId).to.not.equal(first.activationId);
    gate = new Promise<void>((resolve) => (release = resolve));
  });

  it('without turnTimeoutMs, a call behind a stuck turn waits out its own deadline', async () => {
    const stuck = b.request('slow', 'z', { gate: true }, { timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 50));
    const err = await b.request('slow', 'z', { n: 1 }, { timeoutMs: 400 }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(DeadlineExceededError);
    release();
    await stuck;
    gate = new Promise<void>((resolve) => (release = resolve));
  });
});

import { expect } from 'chai';
import type { Cluster } from '../../src/cluster';
import type { Grain, GrainContext, GrainTimer } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { MemoryNodes } from './memory-nodes';

/** What each grain's timers did, by identity. */
const fired = new Map<string, number[]>();
/** Turns running at once per identity (must never pass 1). */
const running = new Map<string, number>();
let maxConcurrent = 0;

function record(ctx: GrainContext, n: number): void {
  const list = fired.get(ctx.identity) ?? [];
  list.push(n);
  fired.set(ctx.identity, list);
}

/** Starts the timer its message names; each fire is recorded, and overlaps are measured. */
class Ticker implements Grain {
  private timer: GrainTimer | undefined;
  private n = 0;

  receive(ctx: GrainContext): unknown {
    const m = ctx.message as { op: string; ms?: number; keepAlive?: boolean; slowMs?: number };
    if (m.op === 'every' || m.op === 'after') {
      const handler = async (turn: GrainContext): Promise<void> => {
        const id = turn.identity;
        running.set(id, (running.get(id) ?? 0) + 1);
        maxConcurrent = Math.max(maxConcurrent, running.get(id)!);
        record(turn, ++this.n);
        if (m.slowMs) await new Promise((r) => setTimeout(r, m.slowMs));
        running.set(id, running.get(id)! - 1);
      };
      const opts = { keepAlive: m.keepAlive === true };
      this.timer =
        m.op === 'every'
          ? ctx.timers.every(m.ms!, handler, opts)
          : ctx.timers.after(m.ms!, handler, opts);
      return ctx.timers.size;
    }
    if (m.op === 'everyWith') {
      // Options as a JavaScript caller (or a config object) passes them: unchecked by the compiler.
      const options = (m as { options?: object }).options as { keepAlive?: boolean };
      ctx.timers.every(m.ms!, () => {}, options);
      return ctx.timers.size;
    }
    if (m.op === 'cancel') {
      this.timer?.cancel();
      return ctx.timers.size;
    }
    if (m.op === 'call') {
      // A plain message: if a timer turn ran concurrently, running would be 2 here.
      running.set(ctx.identity, (running.get(ctx.identity) ?? 0) + 1);
      maxConcurrent = Math.max(maxConcurrent, running.get(ctx.identity)!);
      running.set(ctx.identity, running.get(ctx.identity)! - 1);
      return 'ok';
    }
    return undefined;
  }
}

const IDLE_MS = 300;

/** Polls `check` every 5 ms (the activation log has no event to wait on). */
function waitUntil(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const tick = (): void => {
      if (check()) return resolve();
      if (Date.now() - t0 > timeoutMs) return reject(new Error(`timed out: ${what}`));
      setTimeout(tick, 5);
    };
    tick();
  });
}

describe('grain timers (ctx.timers)', function () {
  this.timeout(30_000);
  let nodes: MemoryNodes;
  let c: Cluster;

  before(async () => {
    nodes = new MemoryNodes(() => [
      kind('ticker', () => new Ticker(), { idleTimeoutMs: IDLE_MS, shardCount: 8 }),
    ]);
    c = await nodes.add();
  });
  after(() => nodes.stopAll());
  beforeEach(() => {
    fired.clear();
    maxConcurrent = 0;
    nodes.log.length = 0;
  });

  const activations = (id: string, type: 'activate' | 'deactivate'): number =>
    nodes.log.filter((e) => e.identity === id && e.type === type).length;

  it('runs after() once, as a turn of the grain', async () => {
    await c.request('ticker', 'a1', { op: 'after', ms: 30 });
    await waitUntil(() => fired.get('a1')?.length === 1, 'after fired');
    await new Promise((r) => setTimeout(r, 100));
    expect(fired.get('a1')).to.deep.equal([1]);
  });

  it('runs every() repeatedly and never concurrently with another turn', async () => {
    await c.request('ticker', 'e1', { op: 'every', ms: 20, slowMs: 15, keepAlive: true });
    for (let i = 0; i < 40; i++) {
      await c.request('ticker', 'e1', { op: 'call' });
      await new Promise((r) => setTimeout(r, 3));
    }
    await waitUntil(() => (fired.get('e1')?.length ?? 0) >= 5, 'every fired 5 times');
    expect(maxConcurrent).to.equal(1);
    expect(await c.request('ticker', 'e1', { op: 'cancel' })).to.equal(0);
    const count = fired.get('e1')!.length;
    await new Promise((r) => setTimeout(r, 150));
    // At most the one turn already queued when cancel ran... none: a cancelled timer's turn is skipped.
    expect(fired.get('e1')!.length).to.equal(count);
  });

  it('does not keep the grain from passivating, and is cancelled with it', async () => {
    await c.request('ticker', 'p1', { op: 'every', ms: 50 });
    await waitUntil(() => activations('p1', 'deactivate') === 1, 'p1 passivated');
    const count = fired.get('p1')?.length ?? 0;
    expect(count).to.be.greaterThan(2); // it fired while the grain was active
    await new Promise((r) => setTimeout(r, 300));
    expect(fired.get('p1')?.length ?? 0).to.equal(count); // and never after deactivation
    expect(activations('p1', 'activate')).to.equal(1); // a timer does not reactivate it
    // Each fire counted as pending work while queued, and no longer once its turn ended.
    expect(c.overloadStats().pending).to.equal(0);
  });

  it('keeps the grain active with keepAlive', async () => {
    await c.request('ticker', 'k1', { op: 'every', ms: 50, keepAlive: true });
    await new Promise((r) => setTimeout(r, IDLE_MS * 3));
    expect(activations('k1', 'deactivate')).to.equal(0);
    expect(fired.get('k1')!.length).to.be.greaterThan(10);
    await c.request('ticker', 'k1', { op: 'cancel' });
    await waitUntil(() => activations('k1', 'deactivate') === 1, 'k1 passivated after cancel');
  });

  it('refuses a bad period', async () => {
    const err = await c
      .request('ticker', 'bad', { op: 'every', ms: 0 })
      .catch((e: unknown) => e as Error);
    expect((err as { originalCode?: string }).originalCode).to.equal('ERR_INVALID_ARGUMENT');
  });

  it('refuses an option it does not know, and a keepAlive that is no boolean (they passivated it)', async () => {
    for (const [options, argument] of [
      [{ keepalive: true }, 'keepalive'],
      [{ keepAlive: 'yes' }, 'keepAlive'],
    ] as const) {
      const err = await c
        .request('ticker', 'opts', { op: 'everyWith', ms: 100, options })
        .catch((e: unknown) => e as Error);
      expect((err as { originalCode?: string }).originalCode).to.equal('ERR_INVALID_ARGUMENT');
      expect((err as Error).message).to.include(argument);
    }
    const err = await c
      .request('ticker', 'opts', { op: 'everyWith', ms: 100, options: { keepalive: true } })
      .catch((e: unknown) => e as Error);
    expect((err as Error).message).to.include("did you mean 'keepAlive'?");
  });
});

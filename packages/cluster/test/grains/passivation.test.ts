import { expect } from 'chai';
import { NotInfluenceReceiveTimeout } from '@granary/core';
import type { Grain, GrainContext } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { MemoryNodes, overlaps } from './memory-nodes';

/** Resolution of the shared timer wheel (ActorSystem default tickMs). */
const TICK_MS = 10;
const IDLE_MS = 200;
/** Event-loop lag a busy CI machine may add on top of the wheel's one-tick resolution. */
const SCHEDULING_SLACK_MS = 40;

const received = new Map<string, number>();

class Sink implements Grain {
  receive(ctx: GrainContext): unknown {
    received.set(ctx.identity, (received.get(ctx.identity) ?? 0) + 1);
    return (ctx.message as { reply?: boolean }).reply ? ctx.activationId : undefined;
  }
}

function waitUntil(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
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

describe('passivation', function () {
  this.timeout(30_000);
  const nodes = new MemoryNodes(() => [
    kind('sink', () => new Sink(), { idleTimeoutMs: IDLE_MS, shardCount: 16 }),
    kind('fast', () => new Sink(), { idleTimeoutMs: 30, shardCount: 16 }),
  ]);
  before(() => nodes.add('p1'));
  after(() => nodes.stopAll());

  it('deactivates an idle grain after its timeout, within one timer tick', async () => {
    const c = nodes.nodes[0]!;
    await c.request('sink', 'idle-1', { reply: true });
    const lastCall = Date.now();
    await waitUntil(
      () => nodes.log.some((e) => e.identity === 'idle-1' && e.type === 'deactivate'),
      'idle-1 deactivates',
    );
    const ev = nodes.log.find((e) => e.identity === 'idle-1' && e.type === 'deactivate')!;
    expect(ev.reason).to.equal('idle');
    expect(ev.at - lastCall).to.be.at.least(IDLE_MS - 2);
    expect(ev.at - lastCall).to.be.at.most(IDLE_MS + TICK_MS + SCHEDULING_SLACK_MS);
    expect(c.activationCount('sink')).to.equal(0);
  });

  it('messages marked as not influencing idle time do not keep a grain active', async () => {
    const c = nodes.nodes[0]!;
    await c.request('sink', 'idle-2', { reply: true });
    const lastCall = Date.now();
    const ping = { reply: true, [NotInfluenceReceiveTimeout]: true };
    let deactivated = false;
    while (!deactivated && Date.now() - lastCall < IDLE_MS * 3) {
      await c.request('sink', 'idle-2', ping);
      await new Promise((r) => setTimeout(r, 20));
      deactivated = nodes.log.some((e) => e.identity === 'idle-2' && e.type === 'deactivate');
    }
    expect(deactivated, 'deactivated although pinged').to.equal(true);
    const ev = nodes.log.find((e) => e.identity === 'idle-2' && e.type === 'deactivate')!;
    expect(ev.at - lastCall).to.be.at.most(IDLE_MS + TICK_MS + SCHEDULING_SLACK_MS);
  });

  it('10,000 messages sent around the idle boundary: none lost, activations never overlap', async () => {
    const c = nodes.nodes[0]!;
    const ids = Array.from({ length: 10 }, (_, i) => `edge-${i}`);
    for (const id of ids) received.set(id, 0);
    const before = nodes.log.filter((e) => e.kind === 'fast' && e.type === 'deactivate').length;
    let sent = 0;
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 500; i++) c.send('fast', ids[i % ids.length]!, { n: sent++ });
      // pause near the 30 ms idle timeout so deactivations race with the next burst
      await new Promise((r) => setTimeout(r, 25 + (round % 4) * 5));
    }
    expect(sent).to.equal(10_000);
    await waitUntil(
      () => ids.reduce((s, id) => s + received.get(id)!, 0) === 10_000,
      'all 10,000 delivered',
    );
    const deactivations = nodes.log.filter((e) => e.kind === 'fast' && e.type === 'deactivate');
    expect(deactivations.length - before, 'some passivations raced the bursts').to.be.greaterThan(
      10,
    );
    expect(overlaps(nodes.log)).to.deep.equal([]);
  });
});

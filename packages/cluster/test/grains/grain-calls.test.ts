import { expect } from 'chai';
import { PID, Props, UnknownKindError } from '@granary/core';
import { ActivationDeniedError, DeadlineExceededError, GrainError } from '../../src/errors';
import type { Grain, GrainContext } from '../../src/grains/grain';
import { grainIdOf } from '../../src/grains/internal/call-headers';
import { kind } from '../../src/grains/kind';
import { MemoryNodes } from './memory-nodes';

class Counter implements Grain {
  private n = 0;
  activated = 0;
  async onActivate(): Promise<void> {
    await new Promise((r) => setTimeout(r, 20)); // messages must wait, in order
  }
  receive(ctx: GrainContext): unknown {
    const m = ctx.message as { op: string; v?: number };
    if (m.op === 'add') return (this.n += m.v ?? 1);
    if (m.op === 'get')
      return { n: this.n, activationId: ctx.activationId, identity: ctx.identity };
    if (m.op === 'boom') throw Object.assign(new RangeError('bad value'), { code: 'ERR_BAD' });
    if (m.op === 'slow') return new Promise((r) => setTimeout(() => r('late'), 500));
    if (m.op === 'deadline') return { deadline: ctx.deadline, remaining: ctx.remainingMs };
    return undefined;
  }
}

const failedOnce = new Set<string>();

/** onActivate throws the first time per identity. */
class Flaky implements Grain {
  onActivate(ctx: GrainContext): void {
    if (!failedOnce.has(ctx.identity)) {
      failedOnce.add(ctx.identity);
      throw Object.assign(new Error('cannot load state'), { code: 'ERR_LOAD' });
    }
  }
  receive(ctx: GrainContext): unknown {
    return ctx.activationId;
  }
}

const counter = () =>
  kind('counter', () => new Counter(), {
    shardCount: 32,
    canActivate: (id) => !id.startsWith('forbidden'),
  });

describe('grain calls (MemoryProvider, 3 members)', function () {
  this.timeout(20_000);
  const nodes = new MemoryNodes(() => [
    counter(),
    kind('flaky', () => new Flaky(), { shardCount: 8 }),
  ]);

  before(async () => {
    await nodes.add('a');
    await nodes.add('b');
    await nodes.add('c');
  });
  after(() => nodes.stopAll());

  it('activates on the first message and delivers the held messages in order', async () => {
    const [a] = nodes.nodes;
    const replies = await Promise.all(
      Array.from({ length: 50 }, () => a!.request<number>('counter', 'order-1', { op: 'add' })),
    );
    expect(replies).to.deep.equal(Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it('routes every caller to the one activation of an identity', async () => {
    const ids = await Promise.all(
      nodes.nodes.map((n) =>
        n.request<{ activationId: string }>('counter', 'shared', { op: 'get' }),
      ),
    );
    expect(new Set(ids.map((r) => r.activationId)).size).to.equal(1);
    const hosting = nodes.nodes.filter((n) => n.activationCount('counter') > 0);
    expect(hosting.length).to.be.greaterThan(0);
    const total = nodes.nodes.reduce((s, n) => s + n.activationCount('counter'), 0);
    expect(total).to.equal(2); // order-1 and shared
  });

  it('carries a grain error as GrainError with the original name, code and message', async () => {
    const err = await nodes.nodes[1]!.request('counter', 'e1', { op: 'boom' }).catch(
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(GrainError);
    expect(err).to.include({
      code: 'ERR_GRAIN',
      originalName: 'RangeError',
      originalCode: 'ERR_BAD',
      message: 'bad value',
    });
  });

  it('a failing onActivate reaches the caller as GrainError; the next call activates again', async () => {
    const c = nodes.nodes[0]!;
    const err = await c.request('flaky', 'f-1', 'hi').catch((e: unknown) => e);
    expect(err)
      .to.be.instanceOf(GrainError)
      .and.include({ originalCode: 'ERR_LOAD', originalName: 'Error' });
    const ok = await c.request<string>('flaky', 'f-1', 'hi');
    expect(ok).to.be.a('string');
    const failed = nodes.log.filter((e) => e.identity === 'f-1' && e.type === 'activate');
    expect(failed).to.have.length(2);
    expect(ok).to.equal(failed[1]!.activationId);
  });

  it('rejects an unknown kind at once with UnknownKindError', async () => {
    const t0 = Date.now();
    const err = await nodes.nodes[0]!.request('nope', 'x', { op: 'get' }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(UnknownKindError);
    expect(Date.now() - t0).to.be.lessThan(100);
  });

  it('rejects an identity canActivate refuses with ActivationDeniedError, no retry', async () => {
    const t0 = Date.now();
    const err = await nodes.nodes[2]!.request('counter', 'forbidden-1', { op: 'get' }).catch(
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ActivationDeniedError);
    expect(Date.now() - t0).to.be.lessThan(200);
  });

  it("the caller's deadline reaches a grain on another member (sent as time left)", async () => {
    const [a] = nodes.nodes;
    let id = '';
    for (let i = 0; id === ''; i++) {
      const candidate = `deadline-${i}`;
      if (a!.ownerOf('counter', a!.shardOf('counter', candidate))?.id !== 'a') id = candidate;
    }
    const start = Date.now();
    const reply = await a!.request<{ deadline: number; remaining: number }>(
      'counter',
      id,
      { op: 'deadline' },
      { timeoutMs: 5_000 },
    );
    // The grain's clock is this process's, so the deadline is exact up to the ms rounding on
    // the wire and the time the call took.
    expect(reply.deadline).to.be.within(start + 5_000 - 100, Date.now() + 5_000 + 1);
    expect(reply.remaining).to.be.above(4_000).and.at.most(5_000);
  });

  it("a grain is reachable by its PID at the owner, $g/<kind>/<identity> (the wire's address)", async () => {
    const [a] = nodes.nodes;
    const owner = a!.ownerOf('counter', a!.shardOf('counter', 'by-pid'))!;
    const reply = await a!.system.root.request<{ identity: string }>(
      new PID(owner.address, grainIdOf('counter', 'by-pid')),
      { op: 'get' },
      { timeoutMs: 5_000 },
    );
    expect(reply.identity).to.equal('by-pid');
  });

  it('fails past the deadline with DeadlineExceededError naming kind/id, deadline and attempts', async () => {
    const err = await nodes.nodes[0]!.request(
      'counter',
      'slow-1',
      { op: 'slow' },
      { timeoutMs: 100 },
    ).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(DeadlineExceededError);
    expect((err as Error).message).to.match(/counter\/slow-1.*100 ms.*1 attempt/);
  });

  it('send delivers without a reply, in order with later requests', async () => {
    const a = nodes.nodes[0]!;
    for (let i = 0; i < 10; i++) a.send('counter', 'sent-1', { op: 'add', v: 2 });
    // sends are acknowledged asynchronously; poll the state through requests
    let n = 0;
    for (let i = 0; i < 100 && n < 20; i++) {
      n = (await a.request<{ n: number }>('counter', 'sent-1', { op: 'get' })).n;
      if (n < 20) await new Promise((r) => setTimeout(r, 10));
    }
    expect(n).to.equal(20);
  });

  it('send with a sender: the grain sees it as ctx.sender and its replies reach that actor', async () => {
    const a = nodes.nodes[0]!;
    const replies: unknown[] = [];
    let done!: () => void;
    const allThree = new Promise<void>((r) => (done = r));
    const inbox = a.system.root.spawn(
      Props.fromFunc((ctx) => {
        if (typeof ctx.message === 'number' && replies.push(ctx.message) === 3) done();
      }),
    );
    // Identities spread over the members, so some replies cross nodes over gRPC.
    for (const id of ['reply-1', 'reply-2', 'reply-3']) {
      a.send('counter', id, { op: 'add', v: 5 }, { sender: inbox });
    }
    await allThree;
    expect(replies).to.deep.equal([5, 5, 5]);
  });
});

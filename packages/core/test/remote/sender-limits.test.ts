import { expect } from 'chai';
import { RemoteLimitError } from '../../src/errors';
import { PID } from '../../src/pid';
import { Props } from '../../src/props';
import type { TestNode } from './helpers';
import { rejectionOf, startNode, stopNodes } from './helpers';

const echo = Props.fromFunc((ctx) => {
  if (ctx.sender) ctx.respond(ctx.message);
});

/**
 * What a peer's inbound limits would refuse is refused at the sender, for the one message: a
 * frame over a limit makes the receiver close the link, which failed every other call on it.
 */
describe('Remote sender limits', function () {
  this.timeout(30000);
  const nodes: TestNode[] = [];
  let a: TestNode;
  let b: TestNode;
  const LONG = 'x'.repeat(5000); // over the default limits.maxStringBytes (4096)

  beforeEach(async () => {
    a = await startNode();
    b = await startNode();
    nodes.push(a, b);
    b.system.root.spawnNamed(echo, 'echo');
    b.system.root.spawnNamed(echo, LONG);
  });
  afterEach(() => stopNodes(nodes));

  /** Calls in flight on the link while the refused one goes out: none may fail. */
  async function sideCalls(): Promise<unknown[]> {
    const echoPid = new PID(b.address, 'echo');
    await a.system.root.request(echoPid, 'warm', { timeoutMs: 5000 });
    return Array.from({ length: 20 }, (_, i) =>
      a.system.root.request(echoPid, { i }, { timeoutMs: 5000 }),
    );
  }

  it('refuses a request whose target id is over limits.maxStringBytes; the link stays up', async () => {
    const side = await sideCalls();
    const err = await rejectionOf(
      a.system.root.request(new PID(b.address, LONG), 'hi', { timeoutMs: 5000 }),
    );
    expect(err).to.be.instanceOf(RemoteLimitError);
    expect((err as RemoteLimitError).limit).to.equal('limits.maxStringBytes');
    expect(err.message).to.contain('target id');
    expect(await Promise.all(side)).to.have.length(20);
    expect(b.remote.stats.limitExceeded).to.equal(0);
  });

  it('throws at a plain send whose target id is over the limit (the caller keeps the message)', async () => {
    const side = await sideCalls();
    expect(() => a.system.root.send(new PID(b.address, LONG), 'hi')).to.throw(RemoteLimitError);
    expect(await Promise.all(side)).to.have.length(20);
  });

  it('refuses a request from a sender whose id is over the limit', async () => {
    const side = await sideCalls();
    const longSender = a.system.root.spawnNamed(
      Props.fromFunc(() => undefined),
      'y'.repeat(5000),
    );
    expect(() =>
      a.system.root.send(new PID(b.address, 'echo'), 'hi', { sender: longSender }),
    ).to.throw(RemoteLimitError, /sender id/);
    expect(await Promise.all(side)).to.have.length(20);
  });

  it('refuses a request whose header is over limits.maxHeaderBytes or maxHeaderEntries', async () => {
    const side = await sideCalls();
    const echoPid = new PID(b.address, 'echo');
    const big = await rejectionOf(
      a.system.root.request(echoPid, 'hi', { timeoutMs: 5000, header: { k: 'v'.repeat(20000) } }),
    );
    expect(big).to.be.instanceOf(RemoteLimitError);
    expect((big as RemoteLimitError).limit).to.equal('limits.maxHeaderBytes');
    const many: Record<string, string> = {};
    for (let i = 0; i < 65; i++) many[`k${i}`] = 'v';
    const wide = await rejectionOf(
      a.system.root.request(echoPid, 'hi', { timeoutMs: 5000, header: many }),
    );
    expect(wide).to.be.instanceOf(RemoteLimitError);
    expect((wide as RemoteLimitError).limit).to.equal('limits.maxHeaderEntries');
    // Within the limits it goes through.
    const ok = await a.system.root.request(echoPid, 'fine', {
      timeoutMs: 5000,
      header: { k: 'v'.repeat(1000) },
    });
    expect(ok).to.equal('fine');
    expect(await Promise.all(side)).to.have.length(20);
  });

  it('measures in UTF-8 bytes: 1,400 three-byte characters are over 4,096 bytes', async () => {
    const err = await rejectionOf(
      a.system.root.request(new PID(b.address, '✓'.repeat(1400)), 'hi', { timeoutMs: 5000 }),
    );
    expect(err).to.be.instanceOf(RemoteLimitError);
    // 1,300 of them (3,900 bytes) are within it: the peer answers (no such actor: a dead letter).
    const near = await rejectionOf(
      a.system.root.request(new PID(b.address, '✓'.repeat(1300)), 'hi', { timeoutMs: 5000 }),
    );
    expect(near).not.to.be.instanceOf(RemoteLimitError);
  });

  it('answers a watch of an actor whose id is over the limit at once (Terminated, not-found)', async () => {
    const far = new PID(b.address, LONG);
    const terminated = await a.system.root.watch(far);
    expect(terminated.why).to.equal('not-found');
    const side = await sideCalls();
    expect(await Promise.all(side)).to.have.length(20);
  });
});

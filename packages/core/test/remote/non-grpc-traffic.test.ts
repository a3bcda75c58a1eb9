import { expect } from 'chai';
import { NON_GRPC_PAYLOADS, closedAfter, openFds } from '@granary/testkit';
import { PID } from '../../src/pid';
import { Props } from '../../src/props';
import { startNode, stopNodes, until, type TestNode } from './helpers';

describe('remote port against traffic that is not gRPC', function () {
  this.timeout(30_000);
  const nodes: TestNode[] = [];
  let b: TestNode;
  let a: TestNode;

  before(async () => {
    b = await startNode({ secret: 'a-secret-of-at-least-16-bytes' });
    a = await startNode({ secret: 'a-secret-of-at-least-16-bytes' });
    nodes.push(b, a);
    b.system.root.spawnNamed(
      Props.fromFunc((ctx) => {
        if (typeof ctx.message === 'string') ctx.respond(ctx.message);
      }),
      'echo',
    );
  });
  after(() => stopNodes(nodes));

  const port = (): number => Number(b.address.split(':').pop());

  for (const [what, payload] of NON_GRPC_PAYLOADS) {
    it(`closes ${what} at once and counts it in closedBeforeUse`, async () => {
      const before = b.remote.stats.closedBeforeUse;
      expect(await closedAfter(port(), payload)).to.be.below(2000);
      await until(() => b.remote.stats.closedBeforeUse === before + 1, 2000, 'the count');
    });
  }

  it('holds no descriptor after 200 such connections at once, and serves members meanwhile', async () => {
    const fds = openFds();
    const before = b.remote.stats.closedBeforeUse;
    const floods = Array.from({ length: 200 }, (_, i) =>
      closedAfter(port(), NON_GRPC_PAYLOADS[i % NON_GRPC_PAYLOADS.length]![1]),
    );
    const reply = await a.system.root.request(new PID(b.address, 'echo'), 'still here', {
      timeoutMs: 5000,
    });
    expect(reply).to.equal('still here');
    await Promise.all(floods);
    await until(() => b.remote.stats.closedBeforeUse === before + 200, 2000, 'the count');
    expect(b.remote.stats.refusedConnections).to.equal(0);
    // The link a -> b and a few the runtime opened meanwhile.
    expect(openFds() - fds).to.be.at.most(10);
  });

  it('does not count a member that connected, handshook and left', async () => {
    const c = await startNode({ secret: 'a-secret-of-at-least-16-bytes' });
    const before = b.remote.stats.closedBeforeUse;
    expect(await c.system.root.request(new PID(b.address, 'echo'), 'hi')).to.equal('hi');
    await stopNodes([c]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(b.remote.stats.closedBeforeUse).to.equal(before);
  });
});

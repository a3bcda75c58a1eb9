import { freePort } from '@granary/testkit';
import { expect } from 'chai';
import { PID } from '../../src/pid';
import { Props } from '../../src/props';
import { RemoteProcess } from '../../src/remote/remote-process';
import type { TestNode } from './helpers';
import { startNode, stopNodes, until } from './helpers';

const echo = Props.fromFunc((ctx) => {
  if (typeof ctx.message === 'string') ctx.respond(ctx.message);
});

/**
 * A PID of another node caches its endpoint's process after the first send (ProcessRegistry.
 * cacheRoute): these check that the cache never outlives what it stands for.
 */
describe('Remote process cached on a PID', function () {
  this.timeout(30000);
  const nodes: TestNode[] = [];
  afterEach(() => stopNodes(nodes));

  async function echoNode(port = 0): Promise<TestNode> {
    const n = await startNode({ port });
    n.system.root.spawnNamed(echo, 'echo');
    nodes.push(n);
    return n;
  }

  it('is taken by later sends to the same PID object, and dropped when its endpoint is removed: the node back on its address is reached', async () => {
    const a = await startNode({ endpointDownTtlMs: 200 });
    nodes.push(a);
    const port = await freePort();
    const first = await echoNode(port);
    const pid = new PID(first.address, 'echo');
    expect(await a.system.root.request(pid, 'one', { timeoutMs: 5000 })).to.equal('one');
    const cached = pid._p;
    expect(cached).to.be.instanceOf(RemoteProcess);
    expect(a.system.registry.get(pid)).to.equal(cached);

    await first.remote.shutdown();
    await first.system.shutdown();
    nodes.splice(nodes.indexOf(first), 1);
    await until(() => a.remote.stats.removedEndpoints >= 1, 10_000, 'the endpoint to be removed');
    expect((cached as RemoteProcess).dead).to.equal(true);

    const second = await echoNode(port);
    expect(second.address).to.equal(first.address);
    expect(await a.system.root.request(pid, 'two', { timeoutMs: 5000 })).to.equal('two');
    expect(pid._p).to.be.instanceOf(RemoteProcess);
    expect(pid._p).not.to.equal(cached);
  });

  it('is trusted only by the system that cached it: another system sending with the same PID object uses its own endpoint', async () => {
    const target = await echoNode();
    const a = await startNode();
    const b = await startNode();
    nodes.push(a, b);
    const pid = new PID(target.address, 'echo');
    for (let i = 0; i < 3; i++) {
      expect(await a.system.root.request(pid, `a${i}`, { timeoutMs: 5000 })).to.equal(`a${i}`);
      expect(await b.system.root.request(pid, `b${i}`, { timeoutMs: 5000 })).to.equal(`b${i}`);
    }
    // a's endpoint closes with its remote; b, sending with the PID a may have cached last, is
    // not affected.
    expect(await a.system.root.request(pid, 'last', { timeoutMs: 5000 })).to.equal('last');
    await a.remote.shutdown();
    expect(await b.system.root.request(pid, 'after', { timeoutMs: 5000 })).to.equal('after');
  });

  it('is not kept for a sender that came over a link (its way back may change with the endpoints)', async () => {
    const target = await echoNode();
    const a = await startNode();
    nodes.push(a);
    let seen: PID | undefined;
    target.system.root.spawnNamed(
      Props.fromFunc((ctx) => {
        if (ctx.message === 'who') {
          seen = ctx.sender;
          ctx.respond('me');
        }
      }),
      'who',
    );
    expect(
      await a.system.root.request(new PID(target.address, 'who'), 'who', { timeoutMs: 5000 }),
    ).to.equal('me');
    expect(seen).not.to.equal(undefined);
    expect(seen!._p).to.equal(undefined);
  });
});

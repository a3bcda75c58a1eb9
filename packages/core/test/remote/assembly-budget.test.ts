import { expect } from 'chai';
import { RemoteLimitError } from '../../src/errors';
import { AssemblyBudget, type AssemblyHolder } from '../../src/remote/internal/assembly-budget';
import { RemoteTraffic } from '../../src/remote/internal/remote-traffic';
import { until } from './helpers';

/** A holder that records why it was dropped; `paused` as the test sets it. */
function holder(
  peer: string,
): AssemblyHolder & { dropped: RemoteLimitError | undefined; isPaused: boolean } {
  const h = {
    isPaused: false,
    dropped: undefined as RemoteLimitError | undefined,
    peer: () => peer,
    paused: () => h.isPaused,
    drop: (e: RemoteLimitError) => void (h.dropped = e),
  };
  return h;
}

describe('AssemblyBudget: the memory of incomplete large messages of a node', () => {
  const budgets: AssemblyBudget[] = [];
  afterEach(() => budgets.splice(0).forEach((b) => b.stop()));
  const budget = (maxBytes: number, timeoutMs: number, traffic?: RemoteTraffic): AssemblyBudget => {
    const b = new AssemblyBudget(maxBytes, timeoutMs, traffic);
    budgets.push(b);
    return b;
  };

  it('makes room by dropping the message that went longest without a chunk', () => {
    const traffic = new RemoteTraffic();
    const b = budget(100, 60_000, traffic);
    const [h1, h2, h3] = [holder('p1'), holder('p2'), holder('p3')];
    b.reserve(h1, 40);
    b.reserve(h2, 40);
    b.progress(h1);
    b.reserve(h3, 40);
    expect(h1.dropped, 'a chunk came since: not the one stalled longest').to.equal(undefined);
    expect(h2.dropped).to.be.instanceOf(RemoteLimitError);
    expect(h2.dropped!.limit).to.equal('limits.maxIncompleteMessageBytes');
    expect(h2.dropped!.message).to.match(
      /would hold 120 bytes, over 100: dropped the 40-byte message from p2/,
    );
    expect(b.bytes).to.equal(80);
    expect(traffic.incompleteBytes).to.equal(80);
    b.release(h1);
    b.release(h3);
    expect(traffic.incompleteBytes).to.equal(0);
  });

  it('refuses a message larger than the whole budget, dropping nothing', () => {
    const b = budget(100, 60_000);
    const h1 = holder('p1');
    b.reserve(h1, 60);
    expect(() => b.reserve(holder('p2'), 101)).to.throw(RemoteLimitError, /over the 100 bytes/);
    expect(h1.dropped).to.equal(undefined);
    expect(b.bytes).to.equal(60);
  });

  it('drops a message with no chunk for the timeout, but not while its own link is paused', async () => {
    const b = budget(100, 200);
    const [paused, stalled] = [holder('paused'), holder('stalled')];
    paused.isPaused = true;
    b.reserve(paused, 10);
    b.reserve(stalled, 10);
    await until(() => stalled.dropped !== undefined, 5000, 'the stalled one to be dropped');
    expect(stalled.dropped!.limit).to.equal('limits.incompleteMessageTimeoutMs');
    expect(stalled.dropped!.message).to.match(/a 10-byte large message from stalled got no chunk/);
    await new Promise((r) => setTimeout(r, 400));
    expect(paused.dropped, 'this node paused it: no stall of the peer’s').to.equal(undefined);
    paused.isPaused = false;
    await until(() => paused.dropped !== undefined, 5000, 'it to be dropped once resumed');
    expect(b.bytes).to.equal(0);
  });
});

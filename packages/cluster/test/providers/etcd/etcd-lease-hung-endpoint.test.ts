import { expect } from 'chai';
import { startEtcd, startTcpProxy, type EtcdHandle, type TcpProxyHandle } from '@granary/testkit';
import type { LeaseHealth } from '../../../src/providers/cluster-provider';
import { EtcdProvider } from '../../../src/providers/etcd/etcd-provider';
import { self } from '../../fixtures/provider-events';

/** How long each endpoint stays silent: long enough for the lease thread to leave it. */
const SILENT_MS = 3000;

// A hung etcd member (SIGSTOP, a silent path) keeps its connections open and answers nothing:
// the lease thread must leave it requestTimeoutMs after a keep-alive went unanswered, as the
// option says, not at the next keep-alive tick. Three proxies to one etcd stand for three
// members. Two go silent at once, the one the stream is on and the next: leaving the etcd
// leader when it is paused is like that, the next member answering nothing until a new leader
// is elected.
describe('EtcdProvider lease on a hung etcd endpoint (its own etcd)', function () {
  this.timeout(60_000);
  let etcd: EtcdHandle;
  let proxies: TcpProxyHandle[] = [];
  before(async () => {
    etcd = await startEtcd();
    proxies = await Promise.all([0, 1, 2].map(() => startTcpProxy({ target: etcd.endpoints[0]! })));
  });
  after(async () => {
    for (const p of proxies) await p.close();
    await etcd?.stop();
  });

  it('moves its keep-alives off a silent endpoint within requestTimeoutMs: never fenced', async () => {
    // Trusted 2.5 s after each answered send, a keep-alive every 1 s, left after 0.3 s
    // unanswered: the keep-alive after the one lost is answered on the third endpoint 1 + 2 x 0.3
    // s after the last answered send. Left at the next tick instead, it is answered at 3 s, past
    // the trust (at the defaults the same two hops took 3-5 s of a 4.5 s trust).
    const a = new EtcdProvider({
      endpoints: proxies.map((p) => p.url),
      ttlSeconds: 5,
      safetyMarginMs: 2500,
      keepAliveIntervalMs: 1000,
      requestTimeoutMs: 300,
    });
    const health: string[] = [];
    try {
      await a.join(self('a', 'hung'));
      const started = Date.now();
      a.onLeaseHealth((e: LeaseHealth) => health.push(`${e} at ${Date.now() - started} ms`));
      // After the first pair the stream is on the endpoint left out; each next pair silences it
      // and the one after it, so the keep-alives must hop twice.
      for (const [x, y] of [
        [0, 1],
        [2, 0],
        [1, 2],
        [0, 1],
        [2, 0],
      ] as const) {
        proxies[x]!.partition();
        proxies[y]!.partition();
        await new Promise((r) => setTimeout(r, SILENT_MS));
        proxies[x]!.heal();
        proxies[y]!.heal();
      }
      expect(health, 'lease health events').to.deep.equal([]);
      expect(a.leaseValid()).to.equal(true);
    } finally {
      await a.leave();
    }
  });
});

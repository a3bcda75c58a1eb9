import { expect } from 'chai';
import { Etcd3 as Etcd3Client } from 'etcd3';
import { startEtcd, startTcpProxy, type EtcdHandle } from '@granary/testkit';
import { LeaseLostError } from '../../../src/errors';
import type { LeaseHealth } from '../../../src/providers/cluster-provider';
import { EtcdProvider } from '../../../src/providers/etcd/etcd-provider';
import { next, self } from '../../fixtures/provider-events';

// The provider against an etcd this suite pauses and slows (kept apart from etcd-provider.test.ts,
// whose suite shares one etcd with the others).

describe('EtcdProvider with etcd paused (its own etcd)', () => {
  let etcd: EtcdHandle;
  let client: Etcd3Client;
  before(async () => {
    etcd = await startEtcd();
    client = new Etcd3Client({ hosts: etcd.endpoints });
  });
  after(async () => {
    client?.close();
    etcd?.resume();
    await etcd?.stop();
  });

  it('a lease grant whose answer is lost: the retry adopts the lease etcd granted, no second lease', async () => {
    // Answers 1.5 s late for a while: each grant reaches etcd (and is applied) but misses its
    // 500 ms deadline; the retries reuse the lease id, so etcd ends up with one lease.
    const proxy = await startTcpProxy({ target: etcd.endpoints[0]! });
    const before = new Set(
      ((await client.leaseClient.leaseLeases()).leases ?? []).map((l) => String(l.ID)),
    );
    const a = new EtcdProvider({ endpoints: [proxy.url], ttlSeconds: 5, requestTimeoutMs: 500 });
    try {
      proxy.delayReplies(1500);
      const fast = setTimeout(() => proxy.delayReplies(0), 700);
      await a.join(self('a', 'grant'));
      clearTimeout(fast);
      const leases = ((await client.leaseClient.leaseLeases()).leases ?? [])
        .map((l) => String(l.ID))
        .filter((id) => !before.has(id));
      const member = (await client.get('/granary/grant/members/a').exec()).kvs[0]!;
      expect(leases, 'leases granted by the join').to.deep.equal([String(member.lease)]);
      expect(a.leaseValid()).to.equal(true);
    } finally {
      await a.leave();
      await proxy.close();
    }
  });

  it('etcd silent past the trust window but holding the lease: fenced, then back on the same lease, incarnation and claims', async () => {
    // Trusted for 2.5 s after each answered send (keep-alive every 500 ms); etcd expires the
    // lease 5 s after the last keep-alive it received. Paused until the member fences (~2-2.5 s),
    // then resumed: ~2 s before etcd could expire the lease.
    const a = new EtcdProvider({
      endpoints: etcd.endpoints,
      ttlSeconds: 5,
      safetyMarginMs: 2500,
      keepAliveIntervalMs: 500,
    });
    try {
      await a.join(self('a', 'paused'));
      const { epoch } = (await a.claim('K', 7)) as { epoch: number };
      const before = (await client.get('/granary/paused/members/a').exec()).kvs[0]!;
      const health: LeaseHealth[] = [];
      a.onLeaseHealth((e) => health.push(e));
      const lost = next<LeaseHealth>(
        (l) => a.onLeaseHealth(l),
        (e) => e === 'lease-lost',
      );
      const restored = next<LeaseHealth>(
        (l) => a.onLeaseHealth(l),
        (e) => e === 'lease-restored',
      );
      const pausedAt = Date.now();
      etcd.pause();
      try {
        await lost;
      } finally {
        etcd.resume();
      }
      expect(Date.now() - pausedAt, 'fenced before etcd could expire the lease').to.be.below(4500);
      expect(a.leaseValid()).to.equal(false);
      expect(await a.claim('K', 7).catch((e) => e)).to.be.instanceOf(LeaseLostError);
      await restored;
      expect(health).to.deep.equal(['lease-lost', 'lease-restored']);
      expect(a.leaseValid()).to.equal(true);
      const after = (await client.get('/granary/paused/members/a').exec()).kvs[0]!;
      expect(after.lease, 'same lease').to.equal(before.lease);
      expect(after.create_revision, 'same incarnation').to.equal(before.create_revision);
      expect(await a.claim('K', 7), 'the claim kept its epoch').to.deep.equal({ epoch });
    } finally {
      await a.leave();
    }
  });
});

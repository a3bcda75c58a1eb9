import { expect } from 'chai';
import { InvalidOptionError } from '@granary/core';
import type { Etcd3 } from 'etcd3';
import { freePort, recordingLogger, startTcpProxy, type EtcdHandle } from '@granary/testkit';
import { JoinRefusedError, JoinTimeoutError, LeaseLostError } from '../../../src/errors';
import type { ClusterLogger } from '../../../src/internal/logger';
import type { Topology } from '../../../src/membership/topology';
import type { ClaimReleased, LeaseHealth } from '../../../src/providers/cluster-provider';
import { EtcdProvider } from '../../../src/providers/etcd/etcd-provider';
import {
  resolveEtcdProviderOptions,
  type EtcdProviderOptions,
} from '../../../src/providers/etcd/etcd-provider-options';
import { etcdForSuite } from '../../fixtures/etcd-for-suite';
import { next, self } from '../../fixtures/provider-events';

describe('EtcdProvider', () => {
  describe('options', () => {
    const bad: Array<[string, Partial<EtcdProviderOptions>]> = [
      ['endpoints', { endpoints: [] }],
      ['endpoints', { endpoints: ['not a url'] }],
      ['ttlSeconds', { ttlSeconds: 1 }],
      ['ttlSeconds', { ttlSeconds: 2.5 }],
      ['keepAliveIntervalMs', { ttlSeconds: 3, keepAliveIntervalMs: 2000 }],
      ['safetyMarginMs', { safetyMarginMs: 5000 }],
      ['joinTimeoutMs', { joinTimeoutMs: 0 }],
      ['maxLoopStallMs', { maxLoopStallMs: 100 }],
      ['prefix', { prefix: 'granary' }],
    ];
    for (const [option, opts] of bad) {
      it(`rejects ${JSON.stringify(opts)} with an error naming ${option}`, () => {
        expect(() => new EtcdProvider({ endpoints: ['http://127.0.0.1:2379'], ...opts }))
          .to.throw(InvalidOptionError, option)
          .with.property('option', option);
      });
    }

    // A shorter TTL is chosen for a faster failover, which a longer interval gives (a lease ends
    // TTL after the last keep-alive etcd received); the margin shrinks with the TTL.
    it('keeps a keep-alive every 500 ms at every TTL, within half of TTL - margin', () => {
      const at = (o: Partial<EtcdProviderOptions>) => {
        const r = resolveEtcdProviderOptions({ endpoints: ['http://127.0.0.1:2379'], ...o });
        return [r.keepAliveIntervalMs, r.safetyMarginMs];
      };
      expect(at({})).to.deep.equal([500, 500]);
      expect(at({ ttlSeconds: 2 })).to.deep.equal([500, 200]);
      expect(at({ ttlSeconds: 3 })).to.deep.equal([500, 300]);
      expect(at({ ttlSeconds: 2, safetyMarginMs: 1200 })).to.deep.equal([400, 1200]);
      expect(at({ ttlSeconds: 2, keepAliveIntervalMs: 200 })).to.deep.equal([200, 200]);
    });
  });

  describe('join with etcd unreachable', () => {
    it('retries with a log line naming the endpoints, then throws JoinTimeoutError', async () => {
      const endpoint = `http://127.0.0.1:${await freePort()}`;
      const lines: string[] = [];
      const logger: ClusterLogger = {
        debug: () => undefined,
        info: () => undefined,
        warn: (_o, msg) => lines.push(String(msg)),
        error: () => undefined,
        child: () => logger,
      };
      const p = new EtcdProvider({
        endpoints: [endpoint],
        joinTimeoutMs: 800,
        requestTimeoutMs: 200,
        logger,
      });
      const started = Date.now();
      const err = await p.join(self('x')).catch((e) => e);
      expect(err).to.be.instanceOf(JoinTimeoutError);
      expect(err.message).to.include(endpoint).and.include('joinTimeoutMs');
      expect(Date.now() - started).to.be.below(3000);
      expect(lines.length).to.be.greaterThan(0);
      expect(lines[0]).to.include(endpoint);
    });
  });

  describe('with etcd', () => {
    let etcd: EtcdHandle;
    let client: Etcd3;
    let providers: EtcdProvider[] = [];
    let cluster = 0;
    const suite = etcdForSuite();
    before(() => ({ etcd, client } = suite));
    beforeEach(() => cluster++);
    afterEach(async () => {
      await Promise.all(providers.map((p) => p.leave()));
      providers = [];
    });
    function make(opts: Partial<EtcdProviderOptions> = {}): EtcdProvider {
      const p = new EtcdProvider({ endpoints: etcd.endpoints, ttlSeconds: 2, ...opts });
      providers.push(p);
      return p;
    }
    const name = () => `p${cluster}`;

    it('join writes the member key on a lease and lists the member with its create revision', async () => {
      const a = make();
      await a.join(self('a', name()));
      const res = await client.get(`/granary/${name()}/members/a`).exec();
      const kv = res.kvs[0];
      expect(kv).to.not.equal(undefined);
      expect(kv.lease).to.not.equal('0');
      const t = a.topology();
      expect(t.members.map((m) => [m.id, m.status, m.incarnation])).to.deep.equal([
        ['a', 'up', Number(kv.create_revision)],
      ]);
    });

    it('every member sees joins and leaves; the version grows and matches across members', async () => {
      const a = make();
      const b = make();
      await a.join(self('a', name()));
      const both = next<Topology>(
        (l) => a.onTopology(l),
        (t) => t.members.length === 2,
      );
      await b.join(self('b', name()));
      const t = await both;
      expect(t.version).to.equal(b.topology().version);
      const gone = next<Topology>(
        (l) => a.onTopology(l),
        (t2) => t2.members.length === 1,
      );
      await b.leave();
      expect((await gone).version).to.be.greaterThan(t.version);
    });

    it('claims only an absent shard: epoch = create revision, heldBy (with its epoch) otherwise, idempotent for the holder', async () => {
      const a = make();
      const b = make();
      await a.join(self('a', name()));
      await b.join(self('b', name()));
      const got = (await a.claim('K', 1)) as { epoch: number };
      const kv = (await client.get(`/granary/${name()}/shards/K/1`).exec()).kvs[0];
      expect(got.epoch).to.equal(Number(kv.create_revision));
      expect(await b.claim('K', 1)).to.deep.equal({ heldBy: 'a', holderEpoch: got.epoch });
      expect(await a.claim('K', 1)).to.deep.equal(got);
    });

    it('release deletes only with the current epoch and hands the release to the member named, only', async () => {
      const a = make();
      const b = make();
      const c = make();
      await a.join(self('a', name()));
      await b.join(self('b', name()));
      await c.join(self('c', name()));
      const { epoch } = (await a.claim('K', 2)) as { epoch: number };
      await a.release('K', 2, epoch - 1, 'b');
      expect((await client.get(`/granary/${name()}/shards/K/2`).exec()).kvs).to.have.length(1);
      const toC: ClaimReleased[] = [];
      c.onClaimReleased((e) => toC.push(e));
      const seen = next<ClaimReleased>(
        (l) => b.onClaimReleased(l),
        (e) => e.shard === 2,
      );
      await a.release('K', 2, epoch, 'b');
      expect(await seen).to.deep.equal({ kind: 'K', shard: 2, epoch, handOff: true });
      const again = (await b.claim('K', 2)) as { epoch: number };
      expect(again.epoch).to.be.greaterThan(epoch);
      expect(toC).to.deep.equal([]);
      // The receiver deletes the note once read: nothing piles up in etcd.
      await new Promise((r) => setTimeout(r, 200));
      expect(await client.getAll().prefix(`/granary/${name()}/notes/`).keys()).to.deep.equal([]);
    });

    it('refuses a member whose shard count for a kind differs from a live host, naming both values', async () => {
      const a = make();
      await a.join({ ...self('a', name()), kindShards: { K: { shardCount: 256, ranges: 256 } } });
      const b = make();
      const err = await b
        .join({ ...self('b', name()), kindShards: { K: { shardCount: 512, ranges: 512 } } })
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(JoinRefusedError);
      expect((err as Error).message)
        .to.include('shardCount 512')
        .and.include('shardCount 256')
        .and.include("member 'a'");
      expect(await client.get(`/granary/${name()}/members/b`).exec()).to.have.property(
        'count',
        '0',
      );
      // Once no member hosts K with the old count, a new count is accepted.
      await a.leave();
      const c = make();
      await c.join({ ...self('c', name()), kindShards: { K: { shardCount: 512, ranges: 512 } } });
      expect(c.topology().members.map((m) => m.id)).to.deep.equal(['c']);
    });

    it('compacts etcd history every historyRetentionMs (history one interval back is kept)', async () => {
      const a = make({ historyRetentionMs: 300 });
      await a.join(self('a', name()));
      for (let i = 0; i < 20; i++) await client.put(`/granary/${name()}/scratch`).value(String(i));
      const first = Number((await client.get('x').exec()).header.revision);
      // Two intervals: the second compacts to the revision read at the first.
      await new Promise((r) => setTimeout(r, 800));
      const err = await client
        .get(`/granary/${name()}/scratch`)
        .revision(first - 10)
        .exec()
        .catch((e: unknown) => e);
      expect(String(err)).to.match(/compacted/);
    });

    it('a revoked lease: lease-lost, claims gone, re-registered with a new incarnation', async () => {
      const a = make();
      await a.join(self('a', name()));
      await a.claim('K', 3);
      const before = (await client.get(`/granary/${name()}/members/a`).exec()).kvs[0];
      const events: LeaseHealth[] = [];
      a.onLeaseHealth((e) => events.push(e));
      const restored = next<LeaseHealth>(
        (l) => a.onLeaseHealth(l),
        (e) => e === 'lease-restored',
      );
      await client.leaseClient.leaseRevoke({ ID: before.lease });
      await restored;
      expect(events).to.deep.equal(['lease-lost', 'lease-restored']);
      expect((await client.get(`/granary/${name()}/shards/K/3`).exec()).kvs).to.have.length(0);
      const after = (await client.get(`/granary/${name()}/members/a`).exec()).kvs[0];
      expect(Number(after.create_revision)).to.be.greaterThan(Number(before.create_revision));
      expect(a.leaseValid()).to.equal(true);
    });

    it('keeps its lease through a 3 s synchronous turn (keep-alives run off the main loop)', async () => {
      const a = make({ ttlSeconds: 2 });
      await a.join(self('a', name()));
      const lines: LeaseHealth[] = [];
      a.onLeaseHealth((e) => lines.push(e));
      const until = Date.now() + 3000; // > ttlSeconds: without the lease thread this fences
      while (Date.now() < until);
      expect(a.leaseValid()).to.equal(true);
      expect(await a.claim('K', 0)).to.have.property('epoch');
      await new Promise((r) => setTimeout(r, 200)); // a lease-lost would have been emitted by now
      expect(lines).to.deep.equal([]);
    });

    it('a loop blocked past maxLoopStallMs: keep-alives stop, the lease is revoked, fenced at wake-up, then re-registered', async () => {
      const a = make({ ttlSeconds: 5, maxLoopStallMs: 600 });
      await a.join(self('a', name()));
      await a.claim('K', 0);
      const lease = (await client.get(`/granary/${name()}/members/a`).exec()).kvs[0].lease;
      const restored = next<LeaseHealth>(
        (l) => a.onLeaseHealth(l),
        (e) => e === 'lease-restored',
      );
      const until = Date.now() + 2000; // well past maxLoopStallMs, well inside the 5 s TTL
      while (Date.now() < until);
      expect(a.leaseValid()).to.equal(false);
      const err = await a.claim('K', 0).catch((e) => e);
      expect(err).to.be.instanceOf(LeaseLostError);
      // The lease thread revoked the lease while the loop was blocked: the claim went with it.
      const ttl = await client.leaseClient.leaseTimeToLive({ ID: lease });
      expect(Number(ttl.TTL)).to.be.at.most(0);
      await restored;
      expect(a.leaseValid()).to.equal(true);
    });

    it('keep-alives answered later than attemptTimeoutMs but within the trust window: never fenced', async () => {
      // Every answer from etcd 1.5 s late: each keep-alive outlives the 500 ms attempt timeout, so
      // the stream is left for a new one each time; the left stream's late answers must still
      // count (the lease is alive in etcd and trusted for 4.5 s after each send).
      const proxy = await startTcpProxy({ target: etcd.endpoints[0]! });
      try {
        const a = make({
          endpoints: [proxy.url],
          ttlSeconds: 5,
          keepAliveIntervalMs: 500,
          requestTimeoutMs: 500,
        });
        await a.join(self('a', name()));
        const health: LeaseHealth[] = [];
        a.onLeaseHealth((e) => health.push(e));
        proxy.delayReplies(1500);
        const until = Date.now() + 7000; // past the 4.5 s trust window: would have fenced by now
        while (Date.now() < until) {
          expect(a.leaseValid(), `lease valid ${until - Date.now()} ms before the end`).to.equal(
            true,
          );
          await new Promise((r) => setTimeout(r, 100));
        }
        expect(health).to.deep.equal([]);
        proxy.delayReplies(0);
      } finally {
        await Promise.all(providers.map((p) => p.leave()));
        providers = [];
        await proxy.close();
      }
    });

    it('a restart within the old lease TTL waits for it quietly: one info line, no warning', async () => {
      // The previous process with this id was SIGKILLed: its member key lives until its lease
      // expires. Waiting for it is expected, not a failure to reach etcd.
      const lease = client.lease(2, { autoKeepAlive: false });
      await lease.put(`/granary/${name()}/members/a`).value('{"id":"a"}');
      const { logger, lines } = recordingLogger();
      const a = make({ logger });
      await a.join(self('a', name()));
      expect(a.topology().members.map((m) => m.id)).to.deep.equal(['a']);
      const waits = lines.filter((l) => l.msg.includes('still held by lease'));
      expect(waits.map((l) => l.level)).to.deep.equal(['info']);
      expect(lines.filter((l) => l.level === 'warn' || l.level === 'error')).to.deep.equal([]);
    });

    it('leave deletes the member key and its claims at once', async () => {
      const a = make();
      await a.join(self('a', name()));
      await a.claim('K', 4);
      await a.leave();
      const res = await client.getAll().prefix(`/granary/${name()}/`).keys();
      expect(res).to.deep.equal([]);
    });
  });
});

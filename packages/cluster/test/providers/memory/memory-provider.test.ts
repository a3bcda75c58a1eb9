import { expect } from 'chai';
import { InvalidOptionError } from '@granary/core';
import { LeaseLostError, NotJoinedError } from '../../../src/errors';
import type { Topology } from '../../../src/membership/topology';
import type { ClaimReleased, LeaseHealth } from '../../../src/providers/cluster-provider';
import { MemoryProvider } from '../../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../../src/providers/memory/memory-table';
import { next, self as member } from '../../fixtures/provider-events';

const self = (id: string) => member(id, 'c');

describe('MemoryProvider', () => {
  let providers: MemoryProvider[] = [];
  afterEach(async () => {
    for (const p of providers) await p.leave();
    providers = [];
  });
  function make(table: MemoryClusterTable, ttlMs = 300): MemoryProvider {
    const p = new MemoryProvider(table, { ttlMs });
    providers.push(p);
    return p;
  }

  describe('join', () => {
    it('lists every member with status up and a growing topology version', async () => {
      const table = new MemoryClusterTable();
      const a = make(table);
      const b = make(table);
      await a.join(self('a'));
      const v1 = a.topology().version;
      const seen = next<Topology>(
        (l) => a.onTopology(l),
        (t) => t.members.length === 2,
      );
      await b.join(self('b'));
      const t = await seen;
      expect(t.version).to.be.greaterThan(v1);
      expect(t.members.map((m) => [m.id, m.status])).to.deep.equal([
        ['a', 'up'],
        ['b', 'up'],
      ]);
      expect(b.topology()).to.equal(t);
    });

    it('rejects a TTL that is not positive, naming ttlMs', () => {
      expect(() => new MemoryProvider(new MemoryClusterTable(), { ttlMs: 0 }))
        .to.throw(InvalidOptionError)
        .with.property('option', 'ttlMs');
    });
  });

  describe('claim', () => {
    it('grants an absent shard with an epoch and reports the holder otherwise', async () => {
      const table = new MemoryClusterTable();
      const a = make(table);
      const b = make(table);
      await a.join(self('a'));
      await b.join(self('b'));
      const got = await a.claim('K', 1);
      expect(got).to.have.property('epoch').that.is.greaterThan(0);
      expect(await b.claim('K', 1)).to.deep.equal({ heldBy: 'a' });
      expect(await a.claim('K', 1)).to.deep.equal(got);
    });

    it('throws NotJoinedError before join', async () => {
      const p = new MemoryProvider(new MemoryClusterTable());
      let err: unknown;
      await p.claim('K', 0).catch((e) => (err = e));
      expect(err).to.be.instanceOf(NotJoinedError);
    });
  });

  describe('release', () => {
    it('deletes only when the epoch matches, and reports the release', async () => {
      const table = new MemoryClusterTable();
      const a = make(table);
      await a.join(self('a'));
      const { epoch } = (await a.claim('K', 2)) as { epoch: number };
      await a.release('K', 2, epoch + 1);
      expect(table.claimOf('K', 2)).to.deep.equal({ memberId: 'a', epoch });
      const released = next<ClaimReleased>(
        (l) => a.onClaimReleased(l),
        () => true,
      );
      await a.release('K', 2, epoch);
      expect(await released).to.deep.equal({ kind: 'K', shard: 2, epoch });
      expect(table.claimOf('K', 2)).to.equal(undefined);
    });

    it('gives a later claim of the same shard a higher epoch', async () => {
      const table = new MemoryClusterTable();
      const a = make(table);
      await a.join(self('a'));
      const first = (await a.claim('K', 3)) as { epoch: number };
      await a.release('K', 3, first.epoch);
      const second = (await a.claim('K', 3)) as { epoch: number };
      expect(second.epoch).to.be.greaterThan(first.epoch);
    });
  });

  describe('leases', () => {
    it('removes a crashed member and its claims once its TTL has passed', async () => {
      const table = new MemoryClusterTable();
      const a = make(table, 200);
      const b = make(table, 200);
      await a.join(self('a'));
      await b.join(self('b'));
      await b.claim('K', 5);
      const gone = next<Topology>(
        (l) => a.onTopology(l),
        (t) => t.members.length === 1,
      );
      const released = next<ClaimReleased>(
        (l) => a.onClaimReleased(l),
        (e) => e.shard === 5,
      );
      b.crash();
      await Promise.all([gone, released]);
      expect(a.topology().members.map((m) => m.id)).to.deep.equal(['a']);
      expect(table.claimOf('K', 5)).to.equal(undefined);
    });

    it('on a lost lease: lease-lost, claims gone, then re-registers with a new incarnation', async () => {
      const table = new MemoryClusterTable();
      const a = make(table);
      await a.join(self('a'));
      await a.claim('K', 7);
      const before = a.topology().members[0].incarnation;
      const events: LeaseHealth[] = [];
      a.onLeaseHealth((e) => events.push(e));
      const restored = next<LeaseHealth>(
        (l) => a.onLeaseHealth(l),
        (e) => e === 'lease-restored',
      );
      table.expireMember('a');
      await restored;
      expect(events).to.deep.equal(['lease-lost', 'lease-restored']);
      expect(table.claimOf('K', 7)).to.equal(undefined);
      expect(a.topology().members[0].incarnation).to.be.greaterThan(before);
      expect(a.leaseValid()).to.equal(true);
    });

    it('fences when no keep-alive succeeded within the TTL minus the margin (blocked loop)', async () => {
      const table = new MemoryClusterTable();
      const a = make(table, 200);
      await a.join(self('a'));
      const lost = next<LeaseHealth>(
        (l) => a.onLeaseHealth(l),
        (e) => e === 'lease-lost',
      );
      const until = Date.now() + 250;
      while (Date.now() < until); // block the event loop past the TTL
      expect(a.leaseValid()).to.equal(false);
      await lost;
      let err: unknown;
      await a.claim('K', 0).catch((e) => (err = e));
      expect(err).to.be.instanceOf(LeaseLostError);
    });
  });

  describe('markLeaving', () => {
    it('publishes status leaving', async () => {
      const table = new MemoryClusterTable();
      const a = make(table);
      await a.join(self('a'));
      const leaving = next<Topology>(
        (l) => a.onTopology(l),
        (t) => t.members[0]?.status === 'leaving',
      );
      await a.markLeaving();
      expect((await leaving).members[0].incarnation).to.equal(a.topology().members[0].incarnation);
    });
  });
});

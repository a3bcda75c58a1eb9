import { expect } from 'chai';
import { InvalidOptionError } from '@granary/core';
import { Cluster } from '../../src/cluster';
import { JoinRefusedError } from '../../src/errors';
import type { ShardReleased } from '../../src/membership/cluster-events';
import { ownerOf } from '../../src/placement/owner-of';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';
import { agreed, claimMap, waitForClusters } from './converge';

const KIND = 'K';
const SHARDS = 64;

describe('Cluster (MemoryProvider)', () => {
  let table: MemoryClusterTable;
  let running: Cluster[] = [];

  beforeEach(() => {
    table = new MemoryClusterTable();
  });
  afterEach(async () => {
    await Promise.all(running.map((c) => c.shutdown({ graceful: false })));
    running = [];
  });

  async function start(id: string, ttlMs = 400): Promise<Cluster> {
    const c = await Cluster.start({
      name: 'test',
      id,
      provider: new MemoryProvider(table, { ttlMs }),
      kinds: [{ name: KIND, shardCount: SHARDS }],
      claimRetryMs: 100,
    });
    running.push(c);
    return c;
  }

  describe('start', () => {
    it('resolves with the shards it should own already held (default 16,384 shards)', async () => {
      // A call made right after start must find its shard held, not be refused and retried:
      // with the default shard count the claims take longer than one turn.
      const c = await Cluster.start({
        name: 'test',
        id: 'solo',
        provider: new MemoryProvider(table),
        kinds: [{ name: KIND }],
      });
      running.push(c);
      expect(c.heldShards(KIND)).to.have.length(c.shardCountOf(KIND)!);
      expect(c.shardCountOf(KIND)).to.equal(16_384);
    });

    it("a listener attached right after start still sees every first 'shard-acquired', once", async () => {
      // start waits for the first claims; their events are held until its caller has had the
      // chance to subscribe (operators and the admin API build their view of claims from them).
      const c = await Cluster.start({
        name: 'test',
        id: 'solo',
        provider: new MemoryProvider(table),
        kinds: [{ name: KIND, shardCount: 64 }],
      });
      running.push(c);
      const seen: number[] = [];
      c.on('shard-acquired', (e) => seen.push(e.shard));
      expect(c.heldShards(KIND)).to.have.length(64);
      await new Promise((r) => setTimeout(r, 50));
      expect(seen.sort((a, b) => a - b)).to.deep.equal([...Array(64).keys()]);
    });

    it('rejects shardCount < 1, naming shardCount', async () => {
      const err = await Cluster.start({
        name: 'x',
        provider: new MemoryProvider(table),
        kinds: [{ name: KIND, shardCount: 0 }],
      }).catch((e) => e);
      expect(err).to.be.instanceOf(InvalidOptionError).with.property('option', 'shardCount');
    });

    it('rejects duplicate kind names, naming kinds', async () => {
      const err = await Cluster.start({
        name: 'x',
        provider: new MemoryProvider(table),
        kinds: [{ name: 'A' }, { name: 'A' }],
      }).catch((e) => e);
      expect(err).to.be.instanceOf(InvalidOptionError).with.property('option', 'kinds');
      expect(table.topology().members).to.have.length(0);
    });

    it('rejects the string form of a kind at start, saying what to pass instead', async () => {
      const err = await Cluster.start({
        name: 'x',
        provider: new MemoryProvider(table),
        kinds: ['counter'] as unknown as [],
      }).catch((e) => e);
      expect(err).to.be.instanceOf(InvalidOptionError).with.property('option', 'kinds');
      expect((err as Error).message).to.contain('kind("counter"');
      expect(table.topology().members).to.have.length(0);
    });
  });

  describe('membership', () => {
    it('three members agree on members and shard owners; each shard served once', async () => {
      const cs = [await start('a'), await start('b'), await start('c')];
      await waitForClusters(cs, () => agreed(cs, KIND, SHARDS), 'three members agree');
      expect(cs[0].topology.members.map((m) => m.id)).to.deep.equal(['a', 'b', 'c']);
      for (const c of cs) expect(c.heldShards(KIND).length).to.be.greaterThan(0);
    });

    it('a member that does not host a kind takes its shard count from its hosts, and follows the topology', async () => {
      const a = await start('a');
      const b = await Cluster.start({
        name: 'test',
        id: 'b',
        provider: new MemoryProvider(table),
        kinds: [{ name: 'Other', shardCount: 8 }],
        shardCount: 1024,
      });
      running.push(b);
      await waitForClusters([a, b], () => b.topology.members.length === 2, 'b sees a', 20_000);
      expect(b.shardCountOf(KIND), 'a kind hosted by a').to.equal(SHARDS);
      expect(b.shardCountOf('Other'), "b's own kind").to.equal(8);
      expect(b.shardCountOf('Nobody'), 'a kind nobody hosts: the default').to.equal(1024);
      await a.shutdown({ graceful: true });
      running = running.filter((c) => c !== a);
      await waitForClusters([b], () => b.topology.members.length === 1, 'b sees a leave', 20_000);
      expect(b.shardCountOf(KIND), 'after its only host left').to.equal(1024);
    });

    it('refuses a member that cuts a kind into another number of shards, naming both values', async () => {
      await start('a');
      const err = await Cluster.start({
        name: 'test',
        id: 'b',
        provider: new MemoryProvider(table),
        kinds: [{ name: KIND, shardCount: SHARDS * 2 }],
      }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(JoinRefusedError);
      expect((err as Error).message)
        .to.include(`shardCount ${SHARDS * 2}`)
        .and.include(`shardCount ${SHARDS}`);
      expect(table.topology().members.map((m) => m.id)).to.deep.equal(['a']);
    });

    it('emits member-joined on the others when a member joins', async () => {
      const a = await start('a');
      const joined = new Promise<string>((resolve) =>
        a.on('member-joined', (m) => m.id === 'b' && resolve(m.id)),
      );
      await start('b');
      expect(await joined).to.equal('b');
    });

    it('a 4th member takes about 1/4 of the shards; each moves once, the rest keep owner and epoch', async () => {
      const cs = [await start('a'), await start('b'), await start('c')];
      await waitForClusters(cs, () => agreed(cs, KIND, SHARDS), 'three agree');
      const before = claimMap(cs, KIND);
      const releases: ShardReleased[] = [];
      for (const c of cs) c.on('shard-released', (e) => releases.push(e));
      const d = await start('d');
      const all = [...cs, d];
      await waitForClusters(all, () => agreed(all, KIND, SHARDS), 'four agree');
      const after = claimMap(all, KIND);
      let moved = 0;
      for (let s = 0; s < SHARDS; s++) {
        const b = before.get(s)!;
        const a = after.get(s)!;
        if (b.owner === a.owner) {
          expect(a.epoch, `shard ${s} epoch`).to.equal(b.epoch);
        } else {
          moved++;
          expect(a.owner).to.equal('d');
          expect(a.epoch).to.be.greaterThan(b.epoch);
        }
      }
      expect(releases.map((r) => r.shard).sort((x, y) => x - y)).to.deep.equal(
        [...new Set(releases.map((r) => r.shard))].sort((x, y) => x - y),
      );
      expect(releases).to.have.length(moved);
      expect(moved / SHARDS).to.be.within(0.25 * 0.75, 0.25 * 1.25);
    });

    it('graceful shutdown: drain hooks run, shards move to the survivors, member-left', async () => {
      const cs = [await start('a'), await start('b')];
      await waitForClusters(cs, () => agreed(cs, KIND, SHARDS), 'two agree');
      const drained: number[] = [];
      cs[1].onBeforeRelease(async (_kind, shard) => {
        expect(cs[1].canServe(KIND, shard)).to.equal(true);
        drained.push(shard);
      });
      const held = cs[1].heldShards(KIND);
      const left = new Promise<string>((resolve) => cs[0].on('member-left', (m) => resolve(m.id)));
      await cs[1].shutdown({ graceful: true });
      expect(drained.sort((x, y) => x - y)).to.deep.equal(held);
      expect(await left).to.equal('b');
      const rest = [cs[0]];
      await waitForClusters(rest, () => cs[0].heldShards(KIND).length === SHARDS, 'a holds all');
      expect(table.topology().members.map((m) => m.id)).to.deep.equal(['a']);
    });

    it('on rebalance the old owner drains (hooks settle) before the new owner can serve', async () => {
      const a = await start('a');
      await waitForClusters([a], () => a.heldShards(KIND).length === SHARDS, 'a holds all');
      const draining = new Map<number, () => void>();
      let drainStarted: () => void = () => undefined;
      const firstDrain = new Promise<void>((resolve) => (drainStarted = resolve));
      a.onBeforeRelease(
        (_kind, shard) =>
          new Promise<void>((resolve) => {
            expect(a.canServe(KIND, shard), 'still served while draining').to.equal(true);
            draining.set(shard, resolve);
            drainStarted();
          }),
      );
      const b = await start('b');
      const both = [a, b];
      // The drain starts with the placement pass after the topology event (at once for a lone one).
      await firstDrain;
      await waitForClusters(both, () => b.topology.members.length === 2, 'b sees both');
      const moving = [...draining.keys()];
      for (const s of moving) {
        expect(ownerOf(KIND, s, b.topology)?.id).to.equal('b');
        expect(b.canServe(KIND, s), `b cannot serve shard ${s} before a's drain settles`).to.equal(
          false,
        );
      }
      for (const resolve of draining.values()) resolve();
      await waitForClusters(both, () => agreed(both, KIND, SHARDS), 'two agree after the drain');
      for (const s of moving) expect(a.canServe(KIND, s)).to.equal(false);
    });

    it('a crashed member is removed after its TTL and the survivors hold all its shards', async () => {
      const provider = new MemoryProvider(table, { ttlMs: 300 });
      const cs = [await start('a'), await start('b')];
      const victim = await Cluster.start({
        name: 'test',
        id: 'v',
        provider,
        kinds: [{ name: KIND, shardCount: SHARDS }],
        claimRetryMs: 100,
      });
      const all = [...cs, victim];
      await waitForClusters(all, () => agreed(all, KIND, SHARDS), 'three agree');
      provider.crash();
      await waitForClusters(
        cs,
        () => agreed(cs, KIND, SHARDS) && cs[0].topology.members.length === 2,
        'survivors hold every shard',
      );
      for (let s = 0; s < SHARDS; s++) {
        expect(table.claimOf(KIND, s)?.memberId).to.be.oneOf(['a', 'b']);
      }
    });
  });

  describe('lease loss', () => {
    it('fences at once (canServe false), rejoins with a new incarnation and claims again', async () => {
      const a = await start('a');
      await waitForClusters([a], () => a.heldShards(KIND).length === SHARDS, 'a holds all');
      const inc = a.self!.incarnation;
      const order: string[] = [];
      a.on('lease-lost', () => {
        order.push('lease-lost');
        expect(a.canServe(KIND, 0)).to.equal(false);
        expect(a.heldShards(KIND)).to.deep.equal([]);
      });
      a.on('lease-restored', () => order.push('lease-restored'));
      table.expireMember('a');
      await waitForClusters(
        [a],
        () => order.length === 2 && a.heldShards(KIND).length === SHARDS,
        'a re-registers and claims again',
      );
      expect(order).to.deep.equal(['lease-lost', 'lease-restored']);
      expect(a.self!.incarnation).to.be.greaterThan(inc);
    });

    it('canServe is false right after a blocked event loop, before any timer runs', async () => {
      const a = await start('a', 200);
      await waitForClusters([a], () => a.heldShards(KIND).length === SHARDS, 'a holds all');
      const shard = a.heldShards(KIND)[0];
      expect(a.canServe(KIND, shard)).to.equal(true);
      const until = Date.now() + 250;
      while (Date.now() < until); // blocked past the TTL
      expect(a.canServe(KIND, shard)).to.equal(false);
    });
  });

  describe('ownerOf', () => {
    it('agrees with placement over the current topology', async () => {
      const a = await start('a');
      expect(a.ownerOf(KIND, 3)?.id).to.equal(ownerOf(KIND, 3, a.topology)?.id);
      expect(a.shardOf(KIND, 'x')).to.be.within(0, SHARDS - 1);
    });
  });
});

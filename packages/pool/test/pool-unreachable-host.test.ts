import { expect } from 'chai';
import {
  ActorSystem,
  EndpointConnectedEvent,
  EndpointTerminatedEvent,
  EndpointUnavailableError,
  SYSTEM_CLOCK,
} from '@granary/core';
import {
  Cluster,
  GranaryClient,
  MemoryClusterTable,
  MemoryProvider,
  type Grain,
  type GrainContext,
} from '@granary/cluster';
import { silentLogger } from '@granary/testkit';
import { PoolClient } from '../src/cluster/pool-client';
import { poolKind } from '../src/cluster/pool-kind';
import { UNREACHABLE_MARK_MS, UnreachableHosts } from '../src/cluster/internal/unreachable-hosts';

/** Answers which member ran it. */
class Where implements Grain {
  receive(ctx: GrainContext): unknown {
    return ctx.cluster.id;
  }
}

const resize = poolKind('resize', () => new Where(), { size: 4 });

describe('a cluster pool while a member that runs workers is dead but still listed', function () {
  this.timeout(60_000);
  const members: Cluster[] = [];
  let client: GranaryClient | undefined;

  async function member(id: string, table: MemoryClusterTable): Promise<Cluster> {
    const c = await Cluster.start({
      name: 'pool-dead',
      id,
      // A long TTL: the dead member stays in the topology for the whole test, as a member
      // SIGKILLed a moment ago stays in it until its lease expires.
      provider: new MemoryProvider(table, { ttlMs: 30_000 }),
      kinds: [resize.on(id)],
      remote: { host: '127.0.0.1', port: 0 },
      requestTimeoutMs: 3000,
      logger: silentLogger,
    });
    members.push(c);
    return c;
  }

  after(async () => {
    await client?.close();
    await Promise.all(members.map((m) => m.shutdown({ graceful: false }).catch(() => undefined)));
  });

  it("sends every call to the live member's workers once the dead member's link is down", async () => {
    const table = new MemoryClusterTable();
    const m1 = await member('m1', table);
    const m2 = await member('m2', table);
    while (m1.topology.members.length < 2) await new Promise((r) => setTimeout(r, 20));
    await expectSkipped(m1, m2, m1);
  });

  it('does the same for a GranaryClient (not a member), which sees its own links', async () => {
    const table = new MemoryClusterTable();
    const m3 = await member('m3', table);
    const m4 = await member('m4', table);
    client = await GranaryClient.connect({
      name: 'pool-dead',
      gateways: [m3.address],
      topologyRefreshMs: 100,
      logger: silentLogger,
    });
    const c = client;
    while (c.topology.members.length < 2) await new Promise((r) => setTimeout(r, 20));
    await expectSkipped(c, m4, m3);
  });

  /** Calls from `caller` reach both members, then only `live` once `victim` died. */
  async function expectSkipped(caller: Cluster | GranaryClient, victim: Cluster, live: Cluster) {
    const pool = PoolClient.get(caller, 'resize');
    const before = new Set<string>();
    for (let i = 0; i < 8; i++) before.add(await pool.request<string>(i, { timeoutMs: 3000 }));
    expect([...before].sort()).to.deep.equal([live.id, victim.id].sort());

    // The victim dies without leaving: its link breaks, the topology still lists it.
    const terminated = new Promise<void>((resolve) => {
      const sub = caller.system.eventStream.subscribe(EndpointTerminatedEvent, (e) => {
        if (e.address !== victim.address) return;
        sub.unsubscribe();
        resolve();
      });
    });
    (victim.provider as MemoryProvider).crash();
    await victim.system.shutdown();
    await terminated;
    expect(caller.topology.members.map((m) => m.id)).to.include(victim.id);

    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        pool.request<string>(i, { timeoutMs: 1500 }).catch((e: unknown) => String(e)),
      ),
    );
    expect(answers).to.deep.equal(Array(8).fill(live.id));
  }
});

describe('UnreachableHosts', () => {
  let t = 0;
  const clock = { ...SYSTEM_CLOCK, monotonic: () => t };
  const member = (id: string, address: string) => ({
    id,
    address,
    kinds: [],
    incarnation: 1,
    status: 'up' as const,
  });
  const topology = { version: 1, members: [member('a', 'h:1'), member('b', 'h:2')] };

  it('marks a member whose link broke until it connects again or the mark expires', async () => {
    const system = new ActorSystem({ clock, logger: silentLogger });
    try {
      const hosts = new UnreachableHosts(system);
      const fail = new EndpointUnavailableError('h:2', 'gone');
      system.eventStream.publish(new EndpointTerminatedEvent('h:2', fail));
      expect([...hosts.ids(topology)]).to.deep.equal(['b']);
      system.eventStream.publish(new EndpointConnectedEvent('h:2'));
      expect([...hosts.ids(topology)]).to.deep.equal([]);
      // A live member whose link broke for a moment is tried again once the mark expires.
      system.eventStream.publish(new EndpointTerminatedEvent('h:2', fail));
      t += UNREACHABLE_MARK_MS - 1;
      expect([...hosts.ids(topology)]).to.deep.equal(['b']);
      t += 1;
      expect([...hosts.ids(topology)]).to.deep.equal([]);
      // An address no member has is not kept.
      system.eventStream.publish(new EndpointTerminatedEvent('h:9', fail));
      expect([...hosts.ids(topology)]).to.deep.equal([]);
      expect((hosts as unknown as { down: Map<string, number> }).down.size).to.equal(0);
    } finally {
      await system.shutdown();
    }
  });
});

import { expect } from 'chai';
import { ActorSystem, PID, Remote, silentLogger, type Logger } from '@granary/core';
import { Cluster } from '../../../src/cluster';
import { SeedRequestRefusedError } from '../../../src/errors';
import { NOOP_LOGGER } from '../../../src/internal/logger';
import { SEED_ACTOR_NAME } from '../../../src/providers/seed/seed-protocol';
import { SeedProvider } from '../../../src/providers/seed/seed-provider';

const KIND = 'K';

/** What a request to the seed resolved or rejected with. */
async function outcome(p: Promise<unknown>): Promise<unknown> {
  try {
    return await p;
  } catch (err) {
    return err;
  }
}

describe('SeedProvider: the seed protocol at the trust boundary', function () {
  this.timeout(30_000);
  let seed: Cluster;
  let member: Cluster;
  let attacker: ActorSystem;
  let seedPid: PID;

  before(async () => {
    const start = (id: string, provider: SeedProvider): Promise<Cluster> =>
      Cluster.start({
        name: 'guarded',
        id,
        provider,
        kinds: [{ name: KIND, shardCount: 8 }],
        remote: { host: '127.0.0.1', port: 0 },
        claimRetryMs: 200,
        logger: NOOP_LOGGER,
      });
    seed = await start('seed', new SeedProvider({ isSeed: true }));
    member = await start('member', new SeedProvider({ seed: seed.address }));
    attacker = new ActorSystem({ logger: silentLogger });
    await new Remote(attacker).start({ host: '127.0.0.1', port: 0, clusterName: 'guarded' });
    seedPid = new PID(seed.address, SEED_ACTOR_NAME);
  });
  after(async () => {
    await attacker.shutdown();
    await member.shutdown({ graceful: false });
    await seed.shutdown({ graceful: false });
  });

  const ask = (message: unknown): Promise<unknown> =>
    outcome(attacker.root.request(seedPid, message, { timeoutMs: 5000 }));

  it('answers malformed requests with SeedRequestRefusedError, before they touch the table', async () => {
    const before = seed.topology.version;
    const listener = { address: attacker.address, id: '$x' };
    const malformed: unknown[] = [
      {
        t: 'seed.join',
        cluster: 'guarded',
        id: 'x',
        address: attacker.address,
        kinds: 'K',
        status: 'up',
        listener,
      },
      {
        t: 'seed.join',
        cluster: 'guarded',
        id: '',
        address: attacker.address,
        kinds: [],
        status: 'up',
        listener,
      },
      {
        t: 'seed.join',
        cluster: 'guarded',
        id: 'x'.repeat(300),
        address: attacker.address,
        kinds: [],
        status: 'up',
        listener,
      },
      {
        t: 'seed.join',
        cluster: 'guarded',
        id: 'x',
        address: 'nowhere',
        kinds: [],
        status: 'up',
        listener,
      },
      {
        t: 'seed.join',
        cluster: 'guarded',
        id: 'x',
        address: attacker.address,
        kinds: [],
        status: 'bogus',
        listener,
      },
      { t: 'seed.heartbeat', leaseId: 'one', version: 0 },
      { t: 'seed.claims', leaseId: 1, items: [[KIND, -1]] },
      { t: 'seed.claims', leaseId: 1, items: [] },
      { t: 'seed.releases', items: [[KIND, 0, 1.5]] },
      { t: 'seed.releases', items: 'all' },
      {
        t: 'seed.join',
        cluster: 'guarded',
        id: 'x',
        address: attacker.address,
        kinds: [KIND],
        kindShards: { [KIND]: { shardCount: 16, ranges: 32 } },
        status: 'up',
        listener,
      },
      { t: 'seed.nothing' },
    ];
    for (const m of malformed) {
      const r = await ask(m);
      expect(r, JSON.stringify(m).slice(0, 80)).to.be.instanceOf(SeedRequestRefusedError);
    }
    expect(seed.topology.version).to.equal(before);
    expect(seed.topology.members.map((m) => m.id).sort()).to.deep.equal(['member', 'seed']);
  });

  it("refuses a join for another member's address, and acts on nobody else's lease or claim", async () => {
    const r = await ask({
      t: 'seed.join',
      cluster: 'guarded',
      id: 'impostor',
      address: member.address,
      kinds: [KIND],
      status: 'up',
      listener: { address: member.address, id: '$1' },
    });
    expect(r).to.be.instanceOf(SeedRequestRefusedError);
    const leaseId = (member.provider as unknown as { leaseId: number }).leaseId;
    for (const m of [
      { t: 'seed.leave', leaseId },
      { t: 'seed.status', leaseId, status: 'leaving' },
      { t: 'seed.heartbeat', leaseId, version: 0 },
    ]) {
      expect(await ask(m), m.t).to.be.instanceOf(SeedRequestRefusedError);
    }
    const held = member.heldShards(KIND);
    if (held.length > 0) {
      const r2 = await ask({
        t: 'seed.releases',
        items: [[KIND, held[0], member.epochOf(KIND, held[0]!)]],
      });
      expect(r2).to.be.instanceOf(SeedRequestRefusedError);
    }
    expect(member.provider.leaseValid()).to.equal(true);
    expect(member.self?.status).to.equal('up');
  });

  it('refuses claims of a kind the member does not host, or past the ranges it joined with', async () => {
    const joined = (await ask({
      t: 'seed.join',
      cluster: 'guarded',
      id: 'claimer',
      address: attacker.address,
      kinds: [KIND],
      kindShards: { [KIND]: { shardCount: 8, ranges: 8 } },
      status: 'leaving',
      listener: { address: attacker.address, id: '$claimer' },
    })) as { ok: boolean; leaseId: number };
    expect(joined.ok).to.equal(true);
    const { leaseId } = joined;
    try {
      for (const items of [[['nobody-hosts-this', 0]], [[KIND, 8]], [[KIND, 2 ** 31 - 1]]]) {
        const r = await ask({ t: 'seed.claims', leaseId, items });
        expect(r, JSON.stringify(items)).to.be.instanceOf(SeedRequestRefusedError);
      }
      const ok = (await ask({ t: 'seed.claims', leaseId, items: [[KIND, 7]] })) as {
        results: unknown[];
      };
      expect(ok.results).to.have.length(1);
    } finally {
      await ask({ t: 'seed.leave', leaseId });
    }
  });

  it('keeps the table when a peer sends Stop to it, and the member ignores pushes not from its seed', async () => {
    attacker.root.stop(seedPid);
    const listener = (member.provider as unknown as { listener: PID }).listener;
    attacker.root.send(new PID(member.address, listener.id), {
      t: 'seed.topology',
      topology: { version: Number.MAX_SAFE_INTEGER, members: [] },
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(member.topology.members.map((m) => m.id).sort()).to.deep.equal(['member', 'seed']);
    const r = await ask({ t: 'seed.heartbeat', leaseId: 1, version: 0 });
    // Still answering (a lease it does not know): the Stop never reached it.
    expect((r as { alive?: boolean }).alive).to.equal(false);
  });

  it('logs pushes not from its seed once, however many a peer sends', async () => {
    const refused: string[] = [];
    let firstRefused!: () => void;
    const logged = new Promise<void>((resolve) => (firstRefused = resolve));
    const capture: Logger = {
      ...silentLogger,
      warn: (_o: object | string, msg?: string) => {
        if (!msg?.startsWith('seed push refused')) return;
        refused.push(msg);
        firstRefused();
      },
      child: () => capture,
    };
    const watcher = await Cluster.start({
      name: 'guarded',
      id: 'watcher',
      provider: new SeedProvider({ seed: seed.address, logger: capture }),
      kinds: [],
      remote: { host: '127.0.0.1', port: 0 },
      logger: NOOP_LOGGER,
    });
    try {
      const listener = (watcher.provider as unknown as { listener: PID }).listener;
      const push = { t: 'seed.topology', topology: { version: 1, members: [] } };
      for (let i = 0; i < 500; i++) attacker.root.send(new PID(watcher.address, listener.id), push);
      await logged;
      await new Promise((r) => setTimeout(r, 300)); // the other 499 arrive meanwhile
      expect(refused).to.deep.equal(['seed push refused: not from the seed']);
    } finally {
      await watcher.shutdown({ graceful: false });
    }
  });
});

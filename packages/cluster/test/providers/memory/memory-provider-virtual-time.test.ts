import { expect } from 'chai';
import { ActorSystem } from '@granary/core';
import { ManualClock, errorsOnlyLogger } from '@granary/testkit';
import { Cluster } from '../../../src/cluster';
import { MemoryProvider } from '../../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../../src/providers/memory/memory-table';

const TTL_MS = 3000;

/** Lets the promise reactions and microtasks of what the clock ran settle. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('MemoryProvider in virtual time (the clock of its table and of the member’s system)', () => {
  let clock: ManualClock;
  let table: MemoryClusterTable;
  let systems: ActorSystem[];
  beforeEach(() => {
    clock = new ManualClock();
    table = new MemoryClusterTable(0, clock);
    systems = [];
  });
  afterEach(async () => {
    for (const s of systems) await s.shutdown();
  });

  async function member(id: string): Promise<{ provider: MemoryProvider; cluster: Cluster }> {
    const system = new ActorSystem({ name: id, clock, logger: errorsOnlyLogger });
    systems.push(system);
    const provider = new MemoryProvider(table, { ttlMs: TTL_MS });
    const cluster = await Cluster.start({
      name: 'virtual',
      id,
      provider,
      system,
      kinds: [{ name: 'K', shardCount: 8 }],
      logger: errorsOnlyLogger,
    });
    return { provider, cluster };
  }

  it('keeps a live member’s lease through many TTLs of virtual time (keep-alives on the clock)', async () => {
    const a = await member('a');
    for (let i = 0; i < 40; i++) {
      clock.advance(TTL_MS / 4);
      await settle();
    }
    expect(a.provider.leaseValid()).to.equal(true);
    expect(table.topology().members.map((m) => m.id)).to.deep.equal(['a']);
    expect(a.cluster.heldShards('K')).to.have.length(8);
    await a.cluster.shutdown({ graceful: false });
  });

  it('drops a crashed member and its claims exactly when its TTL has passed in virtual time', async () => {
    const a = await member('a');
    const b = await member('b');
    await settle();
    b.provider.crash();
    clock.advance(TTL_MS - 1);
    await settle();
    expect(table.topology().members.map((m) => m.id)).to.deep.equal(['a', 'b']);
    clock.advance(1);
    await settle();
    expect(table.topology().members.map((m) => m.id)).to.deep.equal(['a']);
    for (let i = 0; i < 10 && a.cluster.heldShards('K').length < 8; i++) {
      clock.advance(100); // the claim retry tick runs on the clock too
      await settle();
    }
    expect(a.cluster.heldShards('K')).to.have.length(8);
    await a.cluster.shutdown({ graceful: false });
  });
});

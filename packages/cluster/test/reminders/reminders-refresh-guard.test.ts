import { expect } from 'chai';
import { ActorSystem, PID, Remote, silentLogger } from '@granary/core';
import { errorsOnlyLogger } from '@granary/testkit';
import { Cluster } from '../../src/cluster';
import type { Grain } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';
import { REMINDERS_ACTOR } from '../../src/reminders/internal/refresh-actor';
import { MemoryReminderStore } from '../../src/reminders/memory/memory-reminder-store';

class Nothing implements Grain {
  receive(): unknown {
    return 'ok';
  }
}

describe('reminders: the $reminders actor at the trust boundary', function () {
  this.timeout(30_000);
  let cluster: Cluster;
  let outsider: ActorSystem;
  let reads = 0;

  before(async () => {
    const store = new MemoryReminderStore();
    const get = store.get.bind(store);
    store.get = (...args: Parameters<typeof store.get>) => {
      reads++;
      return get(...args);
    };
    cluster = await Cluster.start({
      name: 'guarded',
      id: 'member',
      provider: new MemoryProvider(new MemoryClusterTable(), { ttlMs: 10_000 }),
      kinds: [kind('r', () => new Nothing(), { shardCount: 1 })],
      remote: { host: '127.0.0.1', port: 0 },
      reminders: { store },
      logger: errorsOnlyLogger,
    });
    // The shard is owned (a call activated a grain on it).
    expect(await cluster.request('r', 'x', 'hi')).to.equal('ok');
    // A peer that authenticates (here: loopback, no secret) but is no member.
    outsider = new ActorSystem({ logger: silentLogger });
    await new Remote(outsider).start({ host: '127.0.0.1', port: 0, clusterName: 'guarded' });
  });
  after(async () => {
    await outsider?.shutdown();
    await cluster?.shutdown({ graceful: false });
  });

  it('answers a refresh from a peer that is no member with false, reading nothing from the store', async () => {
    const target = new PID(cluster.address, REMINDERS_ACTOR);
    const refresh = { $remindersRefresh: true, kind: 'r', shard: 0, id: 'x', name: 'n' };
    for (let i = 0; i < 50; i++) outsider.root.send(target, refresh); // no sender: no answer
    // Answered after the 50 above (one link, in order).
    expect(await outsider.root.request(target, refresh, { timeoutMs: 5000 })).to.equal(false);
    expect(reads).to.equal(0);
  });
});

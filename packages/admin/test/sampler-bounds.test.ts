import { Cluster, MemoryClusterTable, MemoryProvider, kind } from '@granary/cluster';
import { expect } from 'chai';
import { AdminActor } from '../src/admin-actor';
import { SHARD_LIST_LIMIT, Sampler } from '../src/sampler';

describe('dashboard samples stay small with many shards', function () {
  this.timeout(30_000);

  it('lists the shards of a small kind, counts those of a large one (16,384 shards)', async () => {
    const cluster = await Cluster.start({
      name: 'sampler-bounds',
      id: 'n1',
      provider: new MemoryProvider(new MemoryClusterTable(), { ttlMs: 5000 }),
      kinds: [
        kind('small', () => ({ receive: () => 1 }), { shardCount: 16 }),
        kind('large', () => ({ receive: () => 1 }), { shardCount: 16_384 }),
      ],
    });
    const actor = new AdminActor(cluster, () => undefined);
    try {
      const sampler = new Sampler(cluster, actor, 1000, 5000);
      let s = await sampler.sample();
      for (let i = 0; i < 100 && !(s.members[0]?.shards.large === 16_384); i++) {
        await new Promise((r) => setTimeout(r, 50)); // the member claims its shards
        s = await sampler.sample();
      }
      const shards = s.members[0]!.shards;
      expect(shards.small).to.have.length(16);
      expect(16_384).to.be.above(SHARD_LIST_LIMIT);
      expect(shards.large, 'a count, not a list').to.equal(16_384);
      expect(JSON.stringify(s).length, 'one sample in bytes').to.be.below(20_000);
      expect(s.movingTotal).to.equal(0);
    } finally {
      actor.stop();
      await cluster.shutdown({ graceful: false });
    }
  });
});

import { startRedis, type RedisHandle } from '@granary/testkit';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { Cluster } from '../../src/cluster';
import { StateUnavailableError } from '../../src/state/errors';
import { RedisStateStore } from '../../src/state/redis/redis-state-store';
import { MemoryNodes } from '../grains/memory-nodes';
import { counterKinds } from './fixtures/write-counters';

// The documented rule (contracts.md, state rule 5; cluster README): a write that fails with
// StateUnavailableError leaves the activation and its state in memory as they are, as Orleans
// leaves a grain's state after a failed WriteStateAsync; the grain decides. A write that never
// reached Redis is then stored by the activation's next successful write.
describe('a state write that never reached Redis (StateUnavailableError)', function () {
  this.timeout(60_000);
  let redis: RedisHandle;
  let store: RedisStateStore;
  let nodes: MemoryNodes;
  let member: Cluster;

  before(async () => {
    redis = await startRedis();
    store = new RedisStateStore({ url: redis.url, commandTimeoutMs: 500 });
    nodes = new MemoryNodes(() => counterKinds(store));
    member = await nodes.add('u1');
  });
  after(async () => {
    await nodes?.stopAll();
    await store?.close();
    await redis?.stop();
  });

  it("keeps the failed call's change in the activation, and the next successful write stores it", async () => {
    expect(await member.request('declared', 'unsent', 'inc')).to.equal(1);
    await redis.kill({ keepData: true });
    const err = await member.request('declared', 'unsent', 'inc').catch((e: unknown) => e);
    expect(StateUnavailableError.is(err), String(err)).to.equal(true);
    // The activation stayed, holding the change its caller was told failed.
    expect(await member.request('declared', 'unsent', 'get')).to.equal(2);
    await redis.restart();
    expect(await member.request('declared', 'unsent', 'inc')).to.equal(3);
    const admin = new Redis(redis.url);
    try {
      const stored = await admin.hget(store.keyOf('declared', 'unsent'), 'v');
      expect(stored, 'stored version').to.equal('2');
    } finally {
      admin.disconnect();
    }
  });
});

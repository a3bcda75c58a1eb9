import { startRedis, type RedisHandle } from '@granary/testkit';
import { InvalidOptionError } from '@granary/core';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { Cluster } from '../../src/cluster';
import type { GrainContext } from '../../src/grains/grain';
import { GrainWithState } from '../../src/grains/grain-state';
import { kind } from '../../src/grains/kind';
import { StateTooLargeError } from '../../src/state/errors';
import { RedisStateStore } from '../../src/state/redis/redis-state-store';
import { MemoryNodes } from '../grains/memory-nodes';

/** Small, so the test's oversize values are small too. */
const MAX = 1024;

/** Keeps a string; 'set:<n>' stores n bytes of it. */
class Blob extends GrainWithState<{ text: string }> {
  override async receive(ctx: GrainContext): Promise<number> {
    const m = ctx.message as string;
    if (m.startsWith('set:')) {
      this.state.text = 'x'.repeat(Number(m.slice(4)));
      await this.writeState();
    }
    return this.state.text.length;
  }
}

describe('RedisStateStore maxStateBytes', function () {
  this.timeout(60_000);
  let redis: RedisHandle;
  let admin: Redis;
  let store: RedisStateStore;
  let nodes: MemoryNodes;
  let member: Cluster;

  before(async () => {
    redis = await startRedis();
    admin = new Redis(redis.url);
    store = new RedisStateStore({ url: redis.url, maxStateBytes: MAX, durability: 'none' });
    nodes = new MemoryNodes(() => [
      kind('blob', () => new Blob(), {
        shardCount: 4,
        state: { store, initial: () => ({ text: '' }) },
      }),
    ]);
    member = await nodes.add('o1');
  });
  after(async () => {
    await nodes?.stopAll();
    await store?.close();
    admin?.disconnect();
    await redis?.stop();
  });

  it('refuses a stored state over the bound at activation, naming the key, without reading it', async () => {
    const key = store.keyOf('blob', 'planted');
    // Someone with Redis access writes a large value under a grain's key.
    await admin.hset(key, 's', Buffer.alloc(MAX + 1, 1), 'v', '1', 'e', '0');
    const err = await member.request('blob', 'planted', 'get').catch((e: unknown) => e);
    expect(StateTooLargeError.is(err), String(err)).to.equal(true);
    expect((err as StateTooLargeError).message)
      .to.contain(key)
      .and.to.contain('maxStateBytes')
      .and.to.contain(`${MAX + 1} bytes`);
    // The store itself answers the same, and other grains go on.
    const direct = await store.read('blob', 'planted').catch((e: unknown) => e);
    expect(direct).to.be.instanceOf(StateTooLargeError);
    expect(direct).to.deep.include({ operation: 'read', bytes: MAX + 1, limit: MAX });
    expect(await member.request('blob', 'other', 'set:10')).to.equal(10);
    // Repaired (deleted), the grain activates afresh.
    await admin.del(key);
    expect(await member.request('blob', 'planted', 'get')).to.equal(0);
  });

  it('reads a state of exactly the bound', async () => {
    const key = store.keyOf('blob', 'edge');
    await admin.hset(key, 's', Buffer.alloc(MAX, 7), 'v', '1', 'e', '0');
    const record = await store.read('blob', 'edge');
    expect(record?.state.byteLength).to.equal(MAX);
  });

  it('refuses a write over the bound before sending it; the activation drops the change', async () => {
    expect(await member.request('blob', 'grow', 'set:100')).to.equal(100);
    const err = await member.request('blob', 'grow', `set:${MAX * 2}`).catch((e: unknown) => e);
    expect(StateTooLargeError.is(err), String(err)).to.equal(true);
    expect((err as StateTooLargeError).operation).to.equal('write');
    // Nothing was written, and the refused change is not served or stored later.
    expect(await member.request('blob', 'grow', 'get')).to.equal(100);
    const stored = await admin.hstrlen(store.keyOf('blob', 'grow'), 's');
    expect(stored).to.be.below(MAX);
  });

  it('takes a positive integer only, 64 MiB by default', async () => {
    for (const bad of [0, -1, 1.5, Number.NaN, '1024']) {
      expect(() => new RedisStateStore({ maxStateBytes: bad as number }), String(bad))
        .to.throw(InvalidOptionError)
        .with.property('option', 'maxStateBytes');
    }
    const fresh = new RedisStateStore({ url: redis.url, durability: 'none', keyPrefix: 'd:' });
    try {
      const key = fresh.keyOf('k', 'x');
      await admin.hset(key, 's', Buffer.alloc(64 * 1024 * 1024 + 1), 'v', '1', 'e', '0');
      const err = await fresh.read('k', 'x').catch((e: unknown) => e);
      expect(err).to.be.instanceOf(StateTooLargeError);
      expect(err).to.deep.include({ limit: 64 * 1024 * 1024 });
    } finally {
      await fresh.close();
      await admin.del(fresh.keyOf('k', 'x'));
    }
  });
});

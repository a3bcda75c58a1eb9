import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startRedis, type RedisHandle } from '@granary/testkit';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { Cluster } from '../../src/cluster';
import { StateWriteRefusedError } from '../../src/state/errors';
import { RedisStateStore } from '../../src/state/redis/redis-state-store';
import { MemoryNodes } from '../grains/memory-nodes';
import { untilInfo } from './fixtures/redis-info';
import { counterKinds } from './fixtures/write-counters';

const KINDS = ['declared', 'persistent'] as const;

/** Redis' answers to writes when its memory or disk gives out, and how to bring each about. */
const FAULTS: {
  code: string;
  name: string;
  reply: RegExp;
  refuse: (admin: Redis, redis: RedisHandle) => Promise<void>;
  allow: (admin: Redis, redis: RedisHandle) => Promise<void>;
}[] = [
  {
    code: 'oom',
    name: 'OOM (used memory over maxmemory, noeviction)',
    reply: /^OOM /,
    refuse: async (admin) => {
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      await admin.config('SET', 'maxmemory', '1');
    },
    allow: async (admin) => void (await admin.config('SET', 'maxmemory', '0')),
  },
  {
    code: 'misconf',
    name: 'MISCONF (the last background save failed: a full or vanished disk)',
    reply: /^MISCONF /,
    refuse: async (admin, redis) => {
      const dir = join(redis.dataDir!, `gone-${Date.now()}`);
      mkdirSync(dir);
      await admin.config('SET', 'dir', dir);
      await admin.config('SET', 'save', '3600 1');
      rmSync(dir, { recursive: true });
      await admin.bgsave();
      await untilInfo(admin, 'persistence', /rdb_last_bgsave_status:err/);
    },
    allow: async (admin, redis) => {
      await admin.config('SET', 'dir', redis.dataDir!);
      await admin.bgsave();
      await untilInfo(admin, 'persistence', /rdb_last_bgsave_status:ok/);
    },
  },
];

describe('Redis refusing writes (OOM, MISCONF) under grain calls', function () {
  this.timeout(60_000);
  let redis: RedisHandle;
  let admin: Redis;
  let store: RedisStateStore;
  let nodes: MemoryNodes;
  let member: Cluster;

  before(async () => {
    // CONFIG SET dir is refused by default since Redis 7 (a protected config).
    redis = await startRedis({ args: ['--enable-protected-configs', 'yes'] });
    admin = new Redis(redis.url);
    store = new RedisStateStore({ url: redis.url, commandTimeoutMs: 1000 });
    nodes = new MemoryNodes(() => counterKinds(store));
    member = await nodes.add('o1');
  });
  after(async () => {
    await nodes?.stopAll();
    await store?.close();
    admin?.disconnect();
    await redis?.stop();
  });

  for (const fault of FAULTS) {
    for (const k of KINDS) {
      it(`${k} state: a write refused with ${fault.name} is StateWriteRefusedError and never applied later`, async () => {
        const id = `${k}-${fault.code}`;
        expect(await member.request(k, id, 'inc')).to.equal(1);
        await fault.refuse(admin, redis);
        let err: unknown;
        try {
          err = await member.request(k, id, 'inc').then(
            (n) => new Error(`answered ${String(n)} while Redis refused writes`),
            (e: unknown) => e,
          );
        } finally {
          await fault.allow(admin, redis);
        }
        // Kind-declared state reaches the caller as it is; PersistentGrain's is grain code's throw.
        const { originalCode } = err as { originalCode?: string };
        if (k === 'declared') {
          expect(StateWriteRefusedError.is(err), String(err)).to.equal(true);
          expect((err as StateWriteRefusedError).reply).to.match(fault.reply);
        } else {
          expect(originalCode, String(err)).to.equal(StateWriteRefusedError.code);
        }
        // The refused increment was dropped with its call: neither read nor stored later.
        expect(await member.request(k, id, 'get')).to.equal(1);
        expect(await member.request(k, id, 'inc')).to.equal(2);
        const stored = await admin.hget(store.keyOf(k, id), 'v');
        expect(stored, 'stored version').to.equal('2');
      });
    }
  }
});

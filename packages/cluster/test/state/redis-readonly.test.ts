import { startRedis, type RedisHandle } from '@granary/testkit';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { Cluster } from '../../src/cluster';
import { StateWriteRefusedError } from '../../src/state/errors';
import { RedisStateStore } from '../../src/state/redis/redis-state-store';
import { MemoryNodes } from '../grains/memory-nodes';
import { untilInfo } from './fixtures/redis-info';
import { counterKinds } from './fixtures/write-counters';

/** Waits until `server` is a replica whose link to its primary is up (its full sync done). */
const inSync = (server: Redis): Promise<void> =>
  untilInfo(server, 'replication', /master_link_status:up/);

/** Waits until `replica` has everything `primary` has written (WAIT counts only the asker's). */
async function caughtUp(primary: Redis, replica: Redis): Promise<void> {
  const offset = (info: string, field: string): number =>
    Number(new RegExp(`${field}:(\\d+)`).exec(info)?.[1] ?? -1);
  const written = offset(await primary.info('replication'), 'master_repl_offset');
  await untilInfo(replica, 'replication', (info) => offset(info, 'slave_repl_offset') >= written);
}

describe('RedisStateStore on a Redis that refuses writes as a replica (READONLY, NOREPLICAS)', function () {
  this.timeout(60_000);
  let a: RedisHandle;
  let b: RedisHandle;
  let adminA: Redis;
  let adminB: Redis;
  let store: RedisStateStore;
  let nodes: MemoryNodes;
  let member: Cluster;

  before(async () => {
    a = await startRedis();
    b = await startRedis();
    adminA = new Redis(a.url);
    adminB = new Redis(b.url);
    await adminB.replicaof('127.0.0.1', a.port);
    await inSync(adminB);
    // No Sentinel: the store keeps dialling a's address whatever its role.
    store = new RedisStateStore({ url: a.url, commandTimeoutMs: 1000 });
    nodes = new MemoryNodes(() => counterKinds(store));
    member = await nodes.add('o1');
  });
  after(async () => {
    await nodes?.stopAll();
    await store?.close();
    adminA?.disconnect();
    adminB?.disconnect();
    await b?.stop();
    await a?.stop();
  });

  /** The refused call's error, checked as each kind reports a StateWriteRefusedError. */
  function expectRefused(k: string, err: unknown, reply: 'READONLY' | 'NOREPLICAS'): void {
    // Kind-declared state reaches the caller as it is; PersistentGrain's is grain code's throw.
    if (k === 'declared') {
      expect(StateWriteRefusedError.is(err), String(err)).to.equal(true);
      expect((err as StateWriteRefusedError).reply.startsWith(reply), String(err)).to.equal(true);
    } else {
      expect((err as { originalCode?: string }).originalCode, String(err)).to.equal(
        StateWriteRefusedError.code,
      );
      expect((err as Error).message, 'the reply named').to.include(`: ${reply} `);
    }
  }

  const failed = (n: unknown): Error =>
    new Error(`answered ${String(n)} while writes were refused`);

  for (const k of ['declared', 'persistent'] as const) {
    it(`${k} state: a write to a demoted primary is StateWriteRefusedError, never applied later; writes go on once it is the primary again`, async () => {
      const id = `${k}-readonly`;
      expect(await member.request(k, id, 'inc')).to.equal(1);
      // An operator promotes a replica that has every write (else the store rightly finds
      // its identity marker gone: lost data).
      await caughtUp(adminA, adminB);
      // A manual failover: b becomes the primary and a, the store's address, its replica.
      await adminB.replicaof('NO', 'ONE');
      await adminA.replicaof('127.0.0.1', b.port);
      await inSync(adminA);
      const err = await member.request(k, id, 'inc').then(failed, (e: unknown) => e);
      // Reads still work on the replica: the refused increment went with its call.
      expect(await member.request(k, id, 'get')).to.equal(1);
      await adminA.replicaof('NO', 'ONE');
      await adminB.replicaof('127.0.0.1', a.port);
      await inSync(adminB);
      expectRefused(k, err, 'READONLY');
      expect(await member.request(k, id, 'get')).to.equal(1);
      expect(await member.request(k, id, 'inc')).to.equal(2);
      expect(await adminA.hget(store.keyOf(k, id), 'v'), 'stored version').to.equal('2');
    });

    it(`${k} state: a write refused for want of replicas (NOREPLICAS) is StateWriteRefusedError, never applied later`, async () => {
      const id = `${k}-noreplicas`;
      expect(await member.request(k, id, 'inc')).to.equal(1);
      await adminA.config('SET', 'min-replicas-to-write', '2');
      let err: unknown;
      try {
        err = await member.request(k, id, 'inc').then(failed, (e: unknown) => e);
      } finally {
        await adminA.config('SET', 'min-replicas-to-write', '0');
      }
      expectRefused(k, err, 'NOREPLICAS');
      expect(await member.request(k, id, 'get')).to.equal(1);
      expect(await member.request(k, id, 'inc')).to.equal(2);
      expect(await adminA.hget(store.keyOf(k, id), 'v'), 'stored version').to.equal('2');
    });
  }
});

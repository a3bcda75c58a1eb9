import { expect } from 'chai';
import { InvalidOptionError } from '@granary/core';
import { Cluster } from '../../src/cluster';
import { kind } from '../../src/grains/kind';
import { MemoryStateStore } from '../../src/state/memory/memory-state-store';
import { RedisStateStore } from '../../src/state/redis/redis-state-store';
import { RedisReminderStore } from '../../src/reminders/redis/redis-reminder-store';
import { EtcdProvider } from '../../src/providers/etcd/etcd-provider';
import type { EtcdProviderOptions } from '../../src/providers/etcd/etcd-provider-options';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';
import { SeedProvider } from '../../src/providers/seed/seed-provider';
import type { SeedProviderOptions } from '../../src/providers/seed/seed-provider-options';

const grain = () => ({ receive: () => 1 });

describe('Options objects refuse an option they do not know', () => {
  it("EtcdProvider: etcd3's ttl for ttlSeconds (it kept the default 5 s lease)", () => {
    const options = { endpoints: ['http://127.0.0.1:2379'], ttl: 3 };
    // From JavaScript or a config object: no excess-property check catches it.
    expect(() => new EtcdProvider(options as EtcdProviderOptions))
      .to.throw(InvalidOptionError, "did you mean 'ttlSeconds'?")
      .with.property('option', 'ttl');
  });

  it('SeedProvider: seeds for seed', () => {
    const options = { seeds: '127.0.0.1:4000' };
    expect(() => new SeedProvider(options as SeedProviderOptions))
      .to.throw(InvalidOptionError, "did you mean 'seed'?")
      .with.property('option', 'seeds');
  });

  it('MemoryProvider: ttl for ttlMs', () => {
    expect(() => new MemoryProvider(new MemoryClusterTable(), { ttl: 1000 } as never))
      .to.throw(InvalidOptionError, "did you mean 'ttlMs'?")
      .with.property('option', 'ttl');
  });

  it("Cluster.start names the providers that take a provider's option (joinTimeoutMs)", async () => {
    const provider = new MemoryProvider(new MemoryClusterTable());
    const options = { name: 'x', provider, joinTimeoutMs: 1500 };
    const err = await Cluster.start(options).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(InvalidOptionError).with.property('option', 'joinTimeoutMs');
    expect((err as Error).message).to.include('new EtcdProvider({ joinTimeoutMs })');
    expect((err as Error).message).to.include('new SeedProvider({ joinTimeoutMs })');
  });

  it('Cluster.start refuses an option of remote, ops, reminders or overload it does not know', async () => {
    // remote: { secrt } started a member that authenticated nobody; reminders: { stor } threw a
    // bare TypeError; ops: { hots } bound loopback; overload: { maxOutstanding } kept the default.
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [
        { remote: { host: '127.0.0.1', port: 0, secrt: 'x'.repeat(20) } },
        'remote.secrt',
        "'secret'",
      ],
      [{ ops: { port: 0, hots: '0.0.0.0' } }, 'ops.hots', "'host'"],
      [{ reminders: { stor: {} } }, 'reminders.stor', "'store'"],
      [{ overload: { maxOutstanding: 5 } }, 'overload.maxOutstanding', "'maxOutstandingCalls'"],
      [{ reminders: {} }, 'reminders.store', 'is required'],
    ];
    for (const [extra, option, hint] of cases) {
      const provider = new MemoryProvider(new MemoryClusterTable());
      const err = await Cluster.start({ name: 'x', provider, ...extra }).catch((e: unknown) => e);
      expect(err, option).to.be.instanceOf(InvalidOptionError).with.property('option', option);
      expect((err as Error).message).to.include(hint);
    }
  });

  it('kind() refuses an option of state or mailbox it does not know', () => {
    const store = new MemoryStateStore();
    const state = { store, initial: () => ({}), persistOnDeactivat: true };
    expect(() => kind('k', grain, { state } as never))
      .to.throw(InvalidOptionError, "did you mean 'persistOnDeactivate'?")
      .with.property('option', 'state.persistOnDeactivat');
    expect(() => kind('k', grain, { mailbox: { capacty: 3 } } as never))
      .to.throw(InvalidOptionError, "did you mean 'capacity'?")
      .with.property('option', 'mailbox.capacty');
  });

  it('the Redis stores refuse host/port (ioredis style: they connected to 127.0.0.1:6379)', () => {
    expect(() => new RedisStateStore({ host: 'redis.internal', port: 6380 } as never))
      .to.throw(InvalidOptionError, 'redisOptions: { host }')
      .with.property('option', 'host');
    expect(() => new RedisReminderStore({ url: 'redis://127.0.0.1:1', keyprefix: 'r:' } as never))
      .to.throw(InvalidOptionError, "did you mean 'keyPrefix'?")
      .with.property('option', 'keyprefix');
    expect(() => new RedisStateStore({ url: 'redis://127.0.0.1:1', durabilty: 'none' } as never))
      .to.throw(InvalidOptionError, "did you mean 'durability'?")
      .with.property('option', 'durabilty');
  });
});

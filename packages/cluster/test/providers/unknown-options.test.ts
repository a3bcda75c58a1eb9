import { expect } from 'chai';
import { InvalidOptionError } from '@granary/core';
import { Cluster } from '../../src/cluster';
import { EtcdProvider } from '../../src/providers/etcd/etcd-provider';
import type { EtcdProviderOptions } from '../../src/providers/etcd/etcd-provider-options';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';
import { SeedProvider } from '../../src/providers/seed/seed-provider';
import type { SeedProviderOptions } from '../../src/providers/seed/seed-provider-options';

describe('Providers refuse an option they do not know', () => {
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
});

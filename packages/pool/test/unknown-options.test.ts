import { expect } from 'chai';
import { InvalidOptionError } from '@granary/core';
import type { Cluster } from '@granary/cluster';
import { AsyncPool, type AsyncPoolOptions } from '../src/async-pool';
import { PoolClient } from '../src/cluster/pool-client';
import type { PoolClientOptions } from '../src/cluster/pool-client-options';
import { poolKind, type PoolKindOptions } from '../src/cluster/pool-kind';

/**
 * Options from JavaScript or a config object, where TypeScript's excess-property check does not
 * reach: a misspelt option was ignored and its default ran instead.
 */
describe('pool options a function does not know', () => {
  it('poolKind refuses one, naming the one likely meant', () => {
    const options = { size: 4, maxInflight: 1 } as unknown as PoolKindOptions;
    expect(() => poolKind('resize', () => ({ receive: () => 1 }), options))
      .to.throw(InvalidOptionError, /'maxInFlight'/)
      .with.property('option', 'maxInflight');
  });

  it('PoolClient.get refuses one, naming the one likely meant', () => {
    const options = { controlTimeout: 100 } as unknown as PoolClientOptions;
    expect(() => PoolClient.get({} as Cluster, 'resize', options))
      .to.throw(InvalidOptionError, /'controlTimeoutMs'/)
      .with.property('option', 'controlTimeout');
  });

  it('AsyncPool refuses one, naming the one likely meant', () => {
    const options = {
      create: () => ({}),
      destroyOnErr: true,
    } as unknown as AsyncPoolOptions<object>;
    expect(() => new AsyncPool(options))
      .to.throw(InvalidOptionError, /'destroyOnError'/)
      .with.property('option', 'destroyOnErr');
  });
});

import { expect } from 'chai';
import type { Cluster } from '@granary/cluster';
import { PoolClientOptionsError } from '../src/errors';
import { PoolClient } from '../src/cluster/pool-client';

/**
 * PoolClient.get keeps one client per caller and pool, made with the first call's options. A
 * later call's different controlTimeoutMs was dropped in silence: the caller's control calls
 * ran on the first call's deadline.
 */
describe('PoolClient.get', () => {
  it('returns the same client for a later call with no options or the same values', () => {
    const caller = {} as Cluster;
    const first = PoolClient.get(caller, 'resize', { controlTimeoutMs: 1000 });
    expect(PoolClient.get(caller, 'resize')).to.equal(first);
    expect(PoolClient.get(caller, 'resize', {})).to.equal(first);
    expect(PoolClient.get(caller, 'resize', { controlTimeoutMs: 1000 })).to.equal(first);
  });

  it('refuses a later call giving an option another value, naming it and both values', () => {
    const caller = {} as Cluster;
    PoolClient.get(caller, 'resize', { controlTimeoutMs: 1000 });
    expect(() => PoolClient.get(caller, 'resize', { controlTimeoutMs: 200 }))
      .to.throw(PoolClientOptionsError, /controlTimeoutMs: 200.*controlTimeoutMs: 1000/)
      .that.includes({
        code: 'ERR_POOL_CLIENT_OPTIONS',
        pool: 'resize',
        option: 'controlTimeoutMs',
        given: 200,
        current: 1000,
      });
  });

  it('compares with the default when the first call gave none', () => {
    const caller = {} as Cluster;
    PoolClient.get(caller, 'resize');
    expect(() => PoolClient.get(caller, 'resize', { controlTimeoutMs: 200 })).to.throw(
      PoolClientOptionsError,
    );
  });

  it('keeps one client per caller and pool: another pool or caller takes its own options', () => {
    const caller = {} as Cluster;
    const a = PoolClient.get(caller, 'a', { controlTimeoutMs: 1000 });
    const b = PoolClient.get(caller, 'b', { controlTimeoutMs: 200 });
    const other = PoolClient.get({} as Cluster, 'a', { controlTimeoutMs: 200 });
    expect(new Set([a, b, other]).size).to.equal(3);
  });
});

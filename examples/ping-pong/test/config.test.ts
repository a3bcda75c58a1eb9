import { expect } from 'chai';
import { DEFAULT_NODE_CONFIG, ENV_VARS, readConfig } from '../src/config';
import { ConfigError } from '../src/errors';
import { envVarsReadBySources } from './helpers/env-vars';

function expectConfigError(fn: () => unknown, variable: string): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).to.be.instanceOf(ConfigError);
  expect((caught as ConfigError).code).to.equal('ERR_CONFIG');
  expect((caught as ConfigError).variable).to.equal(variable);
  expect((caught as ConfigError).message).to.include(variable);
}

describe('readConfig', () => {
  it('ENV_VARS lists exactly the variables the sources read', () => {
    expect([...envVarsReadBySources()].sort()).to.deep.equal([...ENV_VARS].sort());
  });

  it('applies the defaults: seed provider, loopback, passivation after 10 s, one ping a second', () => {
    const c = readConfig('ponger', { GRANARY_SEED: '127.0.0.1:7000' });
    expect(c.provider).to.equal('seed');
    expect(c.host).to.equal('127.0.0.1');
    expect(c.advertisedHost).to.equal('127.0.0.1');
    expect(c.idleTimeoutMs).to.equal(10_000);
    expect(c.pingIntervalMs).to.equal(1_000);
    expect(c.pongerId).to.equal('ponger-1');
    expect(c.cluster).to.equal(DEFAULT_NODE_CONFIG.cluster);
    expect(c.exitWithParent).to.equal(false);
  });

  it('reads etcd endpoints as a comma-separated list', () => {
    const c = readConfig('pinger', {
      GRANARY_PROVIDER: 'etcd',
      GRANARY_ETCD: 'http://a:2379, http://b:2379',
    });
    expect(c.etcd).to.deep.equal(['http://a:2379', 'http://b:2379']);
  });

  it('rejects an unknown provider, naming GRANARY_PROVIDER', () => {
    expectConfigError(
      () => readConfig('ponger', { GRANARY_PROVIDER: 'zookeeper' }),
      'GRANARY_PROVIDER',
    );
  });

  it('requires GRANARY_ETCD with provider etcd', () => {
    expectConfigError(() => readConfig('ponger', { GRANARY_PROVIDER: 'etcd' }), 'GRANARY_ETCD');
  });

  it('reads the secret, mutual TLS file paths and insecure', () => {
    const c = readConfig('ponger', {
      GRANARY_SEED: '127.0.0.1:7000',
      GRANARY_SECRET: 'sixteen-bytes-or-more',
      GRANARY_TLS_CA: '/certs/ca.crt',
      GRANARY_TLS_CERT: '/certs/node.crt',
      GRANARY_TLS_KEY: '/certs/node.key',
      GRANARY_INSECURE: '1',
    });
    expect(c.secret).to.equal('sixteen-bytes-or-more');
    expect(c.tls).to.deep.equal({
      ca: '/certs/ca.crt',
      cert: '/certs/node.crt',
      key: '/certs/node.key',
    });
    expect(c.insecure).to.equal(true);
    const plain = readConfig('ponger', { GRANARY_SEED: '127.0.0.1:7000' });
    expect([plain.secret, plain.tls, plain.insecure]).to.deep.equal([undefined, undefined, false]);
  });

  it('rejects a short GRANARY_SECRET and a partial TLS set', () => {
    const seed = { GRANARY_SEED: '127.0.0.1:7000' };
    expectConfigError(
      () => readConfig('ponger', { ...seed, GRANARY_SECRET: 'short' }),
      'GRANARY_SECRET',
    );
    expectConfigError(
      () => readConfig('ponger', { ...seed, GRANARY_TLS_CERT: '/certs/node.crt' }),
      'GRANARY_TLS_CA',
    );
  });

  it('requires GRANARY_SEED for a non-seed node with provider seed', () => {
    expectConfigError(() => readConfig('pinger', {}), 'GRANARY_SEED');
  });

  it('requires a fixed GRANARY_PORT on the seed node', () => {
    expectConfigError(() => readConfig('seed', {}), 'GRANARY_PORT');
  });

  it('rejects a port that is not a non-negative integer', () => {
    expectConfigError(
      () => readConfig('ponger', { GRANARY_SEED: 'x:1', GRANARY_PORT: '40.5' }),
      'GRANARY_PORT',
    );
    expectConfigError(
      () => readConfig('ponger', { GRANARY_SEED: 'x:1', GRANARY_IDLE_TIMEOUT_MS: '0' }),
      'GRANARY_IDLE_TIMEOUT_MS',
    );
  });
});

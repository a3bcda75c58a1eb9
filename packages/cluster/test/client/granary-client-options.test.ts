import { expect } from 'chai';
import { InvalidOptionError } from '@granary/core';
import { GranaryClient } from '../../src/client/granary-client';
import type { GranaryClientOptions } from '../../src/client/granary-client-options';

/** Options a JavaScript caller (or a config file) can get wrong, and the option each names. */
const BAD: Array<[string, Record<string, unknown>, string]> = [
  ['no name', { gateways: ['127.0.0.1:4000'] }, 'name'],
  ['neither gateways nor etcd', { name: 'c' }, 'gateways'],
  ['gateways as one string', { name: 'c', gateways: '127.0.0.1:4000' }, 'gateways'],
  ['a gateway without a port', { name: 'c', gateways: ['localhost'] }, 'gateways'],
  ['a gateway given as a URL', { name: 'c', gateways: ['http://127.0.0.1:4000'] }, 'gateways'],
  ['a gateway that is not a string', { name: 'c', gateways: [4000] }, 'gateways'],
  [
    'etcd endpoints as one string',
    { name: 'c', etcd: { endpoints: 'http://e:2379' } },
    'etcd.endpoints',
  ],
  ['no etcd endpoints', { name: 'c', etcd: { endpoints: [] } }, 'etcd.endpoints'],
  [
    'requestTimeoutMs as a string',
    { name: 'c', gateways: ['h:1'], requestTimeoutMs: '500' },
    'requestTimeoutMs',
  ],
  [
    'a misspelt option (it was ignored: timeoutMs waited the default 5 s)',
    { name: 'c', gateways: ['h:1'], timeoutMs: 500 },
    'timeoutMs',
  ],
  [
    "etcd3's hosts for etcd.endpoints",
    { name: 'c', etcd: { endpoints: ['http://e:2379'], hosts: ['http://e:2379'] } },
    'etcd.hosts',
  ],
  [
    'topologyRefreshMs of 0',
    { name: 'c', gateways: ['h:1'], topologyRefreshMs: 0 },
    'topologyRefreshMs',
  ],
];

describe('GranaryClientOptions', () => {
  for (const [what, options, option] of BAD) {
    it(`connect refuses ${what} at once with InvalidOptionError naming ${option}`, async () => {
      const started = Date.now();
      const err = await GranaryClient.connect(options as unknown as GranaryClientOptions).then(
        async (c) => {
          await c.close();
          return undefined;
        },
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(InvalidOptionError).with.property('option', option);
      expect(Date.now() - started, 'before any network attempt').to.be.below(500);
    });
  }
});

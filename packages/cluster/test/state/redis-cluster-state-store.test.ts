import { freePort, ManagedServer } from '@granary/testkit';
import { expect } from 'chai';
import { Cluster, Redis } from 'ioredis';
import { RedisStateStore } from '../../src/state/redis/redis-state-store';
import { describeStateStoreConformance } from './state-store-conformance';

/** Redis Cluster reports cluster_state:ok shortly after slots are assigned; poll this often. */
const CLUSTER_POLL_MS = 25;

/** PING on a short-lived connection; true once the server answers. */
async function answers(port: number): Promise<boolean> {
  const probe = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    retryStrategy: () => null,
  });
  probe.on('error', () => {});
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/**
 * A one-node Redis Cluster (cluster mode on, all 16384 slots on this node): enough to run the
 * store through ioredis' Cluster client, its script handling and slot routing.
 */
describe('RedisStateStore on Redis Cluster', () => {
  let server: ManagedServer;
  let port: number;
  const clients: Cluster[] = [];

  const cluster = (): Cluster => {
    const client = new Cluster([{ host: '127.0.0.1', port }]);
    clients.push(client);
    return client;
  };

  before(async () => {
    port = await freePort();
    server = new ManagedServer({
      binary: '/usr/bin/redis-server',
      debianPackage: 'redis-server',
      label: 'redis-cluster',
      args: (dir) => [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'yes',
        '--appendfsync',
        'no', // written before each reply, as the default durability needs
        '--dir',
        dir,
        '--cluster-enabled',
        'yes',
        '--cluster-announce-ip',
        '127.0.0.1',
        '--cluster-config-file',
        'nodes.conf',
        '--daemonize',
        'no',
        '--loglevel',
        'warning',
      ],
      probe: () => answers(port),
    });
    await server.start();
    const admin = new Redis({ port, host: '127.0.0.1' });
    try {
      await admin.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
      while (!String(await admin.call('CLUSTER', 'INFO')).includes('cluster_state:ok')) {
        await new Promise((resolve) => setTimeout(resolve, CLUSTER_POLL_MS));
      }
    } finally {
      admin.disconnect();
    }
  });

  afterEach(() => {
    clients.splice(0).forEach((c) => c.disconnect());
  });

  after(async () => {
    await server?.stop();
  });

  describeStateStoreConformance(async () => ({
    store: new RedisStateStore({ client: cluster() }),
    other: new RedisStateStore({ client: cluster() }),
    detectsLoss: true,
  }));

  it('puts a grain key in the slot of its hash tag', async () => {
    const client = cluster();
    const store = new RedisStateStore({ client });
    await store.write('cart', 'u/1', Uint8Array.of(1), { expectedVersion: null, epoch: 1 });
    const key = store.keyOf('cart', 'u/1');
    const slotOfKey = await client.call('CLUSTER', 'KEYSLOT', key);
    const slotOfTag = await client.call('CLUSTER', 'KEYSLOT', 'cart/u/1');
    expect(slotOfKey).to.equal(slotOfTag);
    expect(await client.hget(key, 'v')).to.equal('1');
  });
});

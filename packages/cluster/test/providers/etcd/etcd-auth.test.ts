import { expect } from 'chai';
import { Etcd3 } from 'etcd3';
import {
  recordingLogger,
  silentLogger,
  startEtcd,
  waitUntil,
  type EtcdHandle,
} from '@granary/testkit';
import { Cluster } from '../../../src/cluster';
import { JoinRefusedError } from '../../../src/errors';
import { kind } from '../../../src/grains/kind';
import { EtcdProvider } from '../../../src/providers/etcd/etcd-provider';

const USER = 'granary-member';
const PASSWORD = 'member-password';

class Counter {
  private n = 0;
  receive(): number {
    return ++this.n;
  }
}

/**
 * Turns etcd's auth on as an operator would: a root user, and a user for the members whose role
 * may read and write the cluster's prefix (the provider's default, /granary) and nothing else.
 */
async function enableAuth(endpoint: string): Promise<void> {
  const admin = new Etcd3({ hosts: endpoint });
  try {
    await admin.user('root').create('root-password');
    await admin.user('root').addRole('root');
    const role = await admin.role('granary').create();
    await role.grant({ permission: 'Readwrite', range: admin.range({ prefix: '/granary' }) });
    await admin.user(USER).create(PASSWORD);
    await admin.user(USER).addRole('granary');
    await admin.auth.authEnable();
  } finally {
    admin.close();
  }
}

// etcd with auth on (RBAC), the way production etcd runs: members authenticate with
// EtcdProviderOptions.etcd.auth, over the main client and the lease thread alike.
describe('EtcdProvider against etcd with auth on (its own etcd)', function () {
  this.timeout(90_000);
  let etcd: EtcdHandle;
  const clusters: Cluster[] = [];
  const start = (id: string, password = PASSWORD, logger = recordingLogger().logger) =>
    Cluster.start({
      name: 'auth',
      id,
      provider: new EtcdProvider({
        endpoints: etcd.endpoints,
        ttlSeconds: 2,
        etcd: { auth: { username: USER, password } },
        logger,
      }),
      kinds: [kind('counter', () => new Counter())],
      remote: { host: '127.0.0.1', port: 0 },
      logger: silentLogger,
    }).then((c) => {
      clusters.push(c);
      return c;
    });

  before(async () => {
    etcd = await startEtcd();
    await enableAuth(etcd.endpoints[0]!);
  });
  after(async () => {
    for (const c of clusters) await c.shutdown({ graceful: false }).catch(() => undefined);
    await etcd?.stop();
  });

  it('joins, serves calls and keeps its lease past several TTLs', async () => {
    const a = await start('a1');
    for (let i = 1; i <= 3; i++) {
      expect(await a.request('counter', 'x', {}, { timeoutMs: 5000 })).to.equal(i);
      await new Promise((r) => setTimeout(r, 1500));
    }
    expect(a.topology.members.map((m) => [m.id, m.status])).to.deep.equal([['a1', 'up']]);
    await a.shutdown();
  });

  it('a wrong password fails the join at once with JoinRefusedError, not after joinTimeoutMs', async () => {
    const started = Date.now();
    const err = await start('bad', 'wrong-password').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(JoinRefusedError);
    expect((err as Error).message).to.match(/refused this member's credentials/);
    // joinTimeoutMs is 10 s: before, each attempt was logged and retried until then.
    expect(Date.now() - started).to.be.below(5000);
  });

  it('after etcd restarts (its tokens forgotten), watches come back: a member joining later is seen, no watch loop', async () => {
    const { logger, lines } = recordingLogger();
    const a = await start('a2', PASSWORD, logger);
    await etcd.stop({ keepData: true });
    await etcd.restart();
    // Every token etcd issued before is unknown now: the watch streams are cancelled with
    // "invalid auth token". Before, each watch was created again at once on the same stream and
    // cancelled again, forever (147,000 warnings in 20 s), and no membership event came again.
    const b = await start('b2');
    await waitUntil(
      () => a.topology.members.some((m) => m.id === 'b2' && m.status === 'up'),
      'a2 sees b2 join after the etcd restart',
      { on: [(l) => a.on('topology', l)], timeoutMs: 15_000 },
    );
    const cancels = lines.filter((l) => /cancelled a watch/.test(l.msg));
    expect(cancels.length, 'watch cancellations logged').to.be.below(20);
    expect(b.topology.members.map((m) => m.id)).to.include.members(['a2', 'b2']);
  });
});

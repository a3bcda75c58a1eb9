import { expect } from 'chai';
import { ActorSystem, PID, Remote } from '@granary/core';
import { Cluster, SeedProvider } from '@granary/cluster';
import { Admin } from '../src/admin';
import { ADMIN_ACTOR } from '../src/admin-protocol';

const SECRET = 'admin-actor-test-secret-0123456789';
const NAME = 'adm';
const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

describe('AdminActor', function () {
  this.timeout(30_000);
  let cluster: Cluster;
  let admin: Admin;
  let drained = false;
  let outsider: ActorSystem;

  beforeEach(async () => {
    drained = false;
    cluster = await Cluster.start({
      name: NAME,
      id: 'node',
      provider: new SeedProvider({ isSeed: true, logger: silent }),
      kinds: [],
      remote: { host: '127.0.0.1', port: 0, secret: SECRET },
      ops: { port: 0 },
      logger: silent,
    });
    admin = await Admin.enable(cluster, {
      print: () => undefined,
      onDrained: () => (drained = true),
    });
    // A peer that holds the secret (as a GranaryClient does) but is no member.
    outsider = new ActorSystem({ logger: silent });
    await new Remote(outsider).start({
      host: '127.0.0.1',
      port: 0,
      secret: SECRET,
      clusterName: NAME,
    });
  });
  afterEach(async () => {
    admin.close();
    await outsider.shutdown();
    await cluster.shutdown({ graceful: false });
  });

  describe('receive', () => {
    it('refuses a drain from a peer that is no member, sent without a sender or naming a member as its sender', async () => {
      const target = new PID(cluster.address, ADMIN_ACTOR);
      outsider.root.send(target, { t: 'admin.drain' });
      outsider.root.send(target, { t: 'admin.drain' }, { sender: new PID(cluster.address, 'x') });
      // Answered after the two above (one link, in order): refused, naming the address.
      const err = await outsider.root
        .request(target, { t: 'admin.drain' }, { timeoutMs: 5000 })
        .then(
          () => undefined,
          (e: unknown) => e as Error,
        );
      expect(err?.name).to.equal('AdminRequestRefusedError');
      expect(err?.message).to.contain('admin requests are taken from members only');
      await new Promise((resolve) => setImmediate(resolve)); // the drain would start here
      expect(cluster.self?.status).to.equal('up');
      expect(drained).to.equal(false);
      expect(cluster.system.isShuttingDown).to.equal(false);
    });
  });
});

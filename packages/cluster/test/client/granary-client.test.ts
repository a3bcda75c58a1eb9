import { expect } from 'chai';
import { EndpointUnavailableError, HandshakeError, InvalidOptionError } from '@granary/core';
import { freePort, startEtcd, type EtcdHandle } from '@granary/testkit';
import { GranaryClient } from '../../src/client/granary-client';
import { ConnectTimeoutError, NoHostError } from '../../src/errors';
import { Cluster } from '../../src/cluster';
import type { GrainContext } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { shardOf } from '../../src/placement/shard-of';
import { EtcdProvider } from '../../src/providers/etcd/etcd-provider';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';
import { quiet } from '../grains/memory-nodes';

const SECRET = 'a-secret-of-at-least-16-bytes';
const SHARDS = 8;

/** Answers who served it; counts its own calls. */
class Echo {
  n = 0;
  receive(ctx: GrainContext): unknown {
    return { member: ctx.cluster.id, identity: ctx.identity, n: ++this.n, message: ctx.message };
  }
}

const echo = kind('echo', () => new Echo(), { shardCount: SHARDS });

interface Reply {
  member: string;
  identity: string;
  n: number;
}

describe('GranaryClient (not a member)', function () {
  this.timeout(30_000);

  describe('through gateways (secret)', () => {
    const table = new MemoryClusterTable();
    const members: Cluster[] = [];
    let client: GranaryClient;
    const joined: string[] = [];

    before(async () => {
      for (const id of ['m1', 'm2']) {
        const c = await Cluster.start({
          name: 'clients',
          id,
          provider: new MemoryProvider(table, { ttlMs: 1000 }),
          kinds: [echo],
          remote: { host: '127.0.0.1', port: await freePort(), secret: SECRET },
          requestTimeoutMs: 3000,
          logger: quiet,
        });
        c.on('member-joined', (m) => joined.push(m.id));
        members.push(c);
      }
      client = await GranaryClient.connect({
        name: 'clients',
        gateways: [members[0]!.address],
        secret: SECRET,
        topologyRefreshMs: 200,
      });
    });
    after(async () => {
      await client?.close();
      await Promise.all(members.map((m) => m.shutdown({ graceful: false })));
    });

    it('learns the topology without joining: no member sees it, no lease', () => {
      expect(client.topology.members.map((m) => m.id)).to.deep.equal(['m1', 'm2']);
      expect(table.topology().members.map((m) => m.id)).to.deep.equal(['m1', 'm2']);
      expect(joined.filter((id) => id.startsWith('client'))).to.deep.equal([]);
    });

    it('sends each call straight to the owner (both members serve, each grain on its owner)', async () => {
      const served = new Set<string>();
      for (let i = 0; i < 20; i++) {
        const reply = await client.request<Reply>('echo', `g${i}`, 'hi');
        const owner = members[0]!.ownerOf('echo', members[0]!.shardOf('echo', `g${i}`));
        expect(reply.member).to.equal(owner?.id);
        served.add(reply.member);
      }
      expect([...served].sort()).to.deep.equal(['m1', 'm2']);
    });

    it('keeps calling while a member leaves (retried within the deadline)', async () => {
      const extra = await Cluster.start({
        name: 'clients',
        id: 'm3',
        provider: new MemoryProvider(table, { ttlMs: 1000 }),
        kinds: [echo],
        remote: { host: '127.0.0.1', port: await freePort(), secret: SECRET },
        logger: quiet,
      });
      const calls = Array.from({ length: 30 }, (_, i) =>
        client.request<Reply>('echo', `x${i}`, 'hi', { timeoutMs: 5000, idempotent: true }),
      );
      await extra.shutdown({ graceful: true });
      const replies = await Promise.all(calls);
      expect(replies).to.have.length(30);
      for (let i = 0; i < 30; i++) {
        expect((await client.request<Reply>('echo', `x${i}`, 'again')).member).to.not.equal('m3');
      }
    });

    it('a client without the secret is refused at the handshake', async () => {
      const stranger = await GranaryClient.connect({
        name: 'clients',
        gateways: [members[0]!.address],
        secret: 'not-the-right-secret-at-all',
        requestTimeoutMs: 600,
      }).catch((e: unknown) => e);
      // Refused at the handshake: the member never takes its call (the refusal is named).
      expect(stranger).to.be.instanceOf(ConnectTimeoutError);
      expect(String((stranger as Error).message)).to.contain('shared secret');
    });

    it('an unreachable etcd fails connect with ConnectTimeoutError naming it, after retrying', async () => {
      const port = await freePort(); // nothing listens there
      const err = await GranaryClient.connect({
        name: 'clients',
        etcd: { endpoints: [`http://127.0.0.1:${port}`] },
        requestTimeoutMs: 800,
      }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(ConnectTimeoutError);
      expect((err as Error).message)
        .to.contain(`etcd at http://127.0.0.1:${port}`)
        .and.contain('800 ms (requestTimeoutMs)');
      const attempts = Number(/after (\d+) attempt/.exec((err as Error).message)?.[1]);
      expect(attempts, 'retried within requestTimeoutMs').to.be.greaterThan(1);
    });

    it('refuses options without gateways or etcd, naming them', async () => {
      const err = await GranaryClient.connect({ name: 'clients' }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(InvalidOptionError).with.property('option', 'gateways');
    });
  });

  describe('through etcd', () => {
    let etcd: EtcdHandle;
    const members: Cluster[] = [];
    let client: GranaryClient;

    before(async () => {
      etcd = await startEtcd();
      for (const id of ['e1', 'e2']) {
        members.push(
          await Cluster.start({
            name: 'clients-etcd',
            id,
            provider: new EtcdProvider({ endpoints: etcd.endpoints, ttlSeconds: 3 }),
            kinds: [echo],
            remote: { host: '127.0.0.1', port: await freePort() },
            logger: quiet,
          }),
        );
      }
      client = await GranaryClient.connect({
        name: 'clients-etcd',
        etcd: { endpoints: etcd.endpoints },
        shardCounts: { echo: SHARDS },
      });
    });
    after(async () => {
      await client?.close();
      await Promise.all(members.map((m) => m.shutdown({ graceful: false })));
      await etcd?.stop();
    });

    it('watches the member keys and calls owners', async () => {
      expect(client.topology.members.map((m) => m.id)).to.deep.equal(['e1', 'e2']);
      const reply = await client.request<Reply>('echo', 'a', 'hi');
      expect(['e1', 'e2']).to.include(reply.member);
    });

    it('a call with a misspelt cluster name fails with NoHostError saying it sees no member', async () => {
      const lost = await GranaryClient.connect({
        name: 'clients-etcd-typo',
        etcd: { endpoints: etcd.endpoints },
      });
      try {
        const err = await lost
          .request('echo', 'a', 'hi', { timeoutMs: 300 })
          .catch((e: unknown) => e);
        expect(err).to.be.instanceOf(NoHostError).with.property('noMembers', true);
        expect((err as Error).message).to.contain('sees no member of the cluster at all');
      } finally {
        await lost.close();
      }
    });

    it('a call refused at the handshake (a secret the members do not share) fails at once, not at its deadline', async () => {
      const stranger = await GranaryClient.connect({
        name: 'clients-etcd',
        etcd: { endpoints: etcd.endpoints },
        secret: 'a-secret-no-member-knows-of',
      });
      try {
        const err = await stranger
          .request('echo', 'a', 'hi', { timeoutMs: 20_000 })
          .catch((e: unknown) => e);
        // Retrying a refused secret until the deadline only delays the same answer.
        expect(err).to.be.instanceOf(EndpointUnavailableError);
        expect((err as Error).cause).to.be.instanceOf(HandshakeError);
        expect((err as Error).message).to.contain('handshake');
        expect((err as Error).cause).to.have.property('refusal', 'authentication');
      } finally {
        await stranger.close();
      }
    });

    it('hashes identities with the shard counts the members state (none given to it)', async () => {
      // The members' keys say how each kind is cut; a client told nothing must not assume 256
      // shards, or every first call of a grain goes to a member that does not own it.
      const bare = await GranaryClient.connect({
        name: 'clients-etcd',
        etcd: { endpoints: etcd.endpoints },
      });
      try {
        for (let i = 0; i < 10; i++) {
          expect(bare.shardOf('echo', `s${i}`)).to.equal(members[0]!.shardOf('echo', `s${i}`));
        }
        expect(bare.shardOf('nobody-hosts-it', 'x')).to.equal(shardOf('x', 16_384));
        const reply = await bare.request<Reply>('echo', 's1', 'hi', { timeoutMs: 2000 });
        expect(reply.member).to.equal(
          members[0]!.ownerOf('echo', members[0]!.shardOf('echo', 's1'))?.id,
        );
      } finally {
        await bare.close();
      }
    });
  });
});

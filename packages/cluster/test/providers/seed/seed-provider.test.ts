import { expect } from 'chai';
import { InvalidOptionError } from '@granary/core';
import { freePort } from '@granary/testkit';
import { Cluster } from '../../../src/cluster';
import { JoinRefusedError, JoinTimeoutError } from '../../../src/errors';
import { SeedProvider } from '../../../src/providers/seed/seed-provider';
import type { SeedProviderOptions } from '../../../src/providers/seed/seed-provider-options';
import { NOOP_LOGGER } from '../../../src/internal/logger';
import { agreed, waitForClusters } from '../../cluster/converge';

const KIND = 'K';
const SHARDS = 32;

describe('SeedProvider', () => {
  describe('options', () => {
    const bad: Array<[string, SeedProviderOptions]> = [
      ['seed', {}],
      ['seed', { seed: 'localhost' }],
      ['ttlMs', { isSeed: true, ttlMs: 0 }],
      ['heartbeatIntervalMs', { isSeed: true, ttlMs: 1000, heartbeatIntervalMs: 600 }],
      ['joinTimeoutMs', { isSeed: true, joinTimeoutMs: -1 }],
    ];
    for (const [option, opts] of bad) {
      it(`rejects ${JSON.stringify(opts)} with an error naming ${option}`, () => {
        expect(() => new SeedProvider(opts))
          .to.throw(InvalidOptionError)
          .with.property('option', option);
      });
    }

    it('needs the remote transport, naming the remote option', async () => {
      const err = await Cluster.start({
        name: 's',
        provider: new SeedProvider({ isSeed: true }),
        kinds: [{ name: KIND }],
      }).catch((e) => e);
      expect(err).to.be.instanceOf(InvalidOptionError).with.property('option', 'remote');
    });
  });

  describe('in one process (each member its own actor system and remote)', () => {
    let running: Cluster[] = [];
    afterEach(async () => {
      for (const c of running.reverse()) await c.shutdown({ graceful: false });
      running = [];
    });

    async function start(id: string, options: SeedProviderOptions, port = 0): Promise<Cluster> {
      const c = await Cluster.start({
        name: 'dev',
        id,
        provider: new SeedProvider(options),
        kinds: [{ name: KIND, shardCount: SHARDS }],
        remote: { host: '127.0.0.1', port },
        claimRetryMs: 200,
        logger: NOOP_LOGGER,
      });
      running.push(c);
      return c;
    }

    it('the seed and two members agree; a graceful leave hands the shards over', async () => {
      const port = await freePort();
      const seed = await start('seed', { isSeed: true }, port);
      const a = await start('a', { seed: `127.0.0.1:${port}` });
      const b = await start('b', { seed: `127.0.0.1:${port}` });
      const all = [seed, a, b];
      await waitForClusters(all, () => agreed(all, KIND, SHARDS), 'three agree');
      expect(a.topology.members.map((m) => m.id)).to.deep.equal(['a', 'b', 'seed']);
      const left = new Promise<string>((resolve) => seed.on('member-left', (m) => resolve(m.id)));
      await b.shutdown({ graceful: true });
      running = running.filter((c) => c !== b);
      expect(await left).to.equal('b');
      const rest = [seed, a];
      await waitForClusters(rest, () => agreed(rest, KIND, SHARDS), 'two agree');
    });

    it('a member that holds no claims leaves: every member drops it', async () => {
      // A client member (no kinds) claims nothing, so nothing else moved the table's revision
      // between its join and its leave: the topology without it carried its join's version,
      // and every member (the seed included) kept it listed until the next change.
      const port = await freePort();
      const seed = await start('seed', { isSeed: true }, port);
      const a = await start('a', { seed: `127.0.0.1:${port}` });
      await waitForClusters([seed, a], () => agreed([seed, a], KIND, SHARDS), 'two agree');
      const client = await Cluster.start({
        name: 'dev',
        id: 'client',
        provider: new SeedProvider({ seed: `127.0.0.1:${port}` }),
        kinds: [],
        remote: { host: '127.0.0.1', port: 0 },
        logger: NOOP_LOGGER,
      });
      await waitForClusters(
        [seed, a],
        () => [seed, a].every((c) => c.topology.members.some((m) => m.id === 'client')),
        'both see the client',
      );
      await client.shutdown({ graceful: true });
      await waitForClusters(
        [seed, a],
        () => [seed, a].every((c) => c.topology.members.every((m) => m.id !== 'client')),
        'both drop the client',
      );
    });

    it('a restarted seed: members fence, re-join, and epochs and versions keep growing', async () => {
      const port = await freePort();
      const seed = await start('seed', { isSeed: true, ttlMs: 1000 }, port);
      const a = await start('a', { seed: `127.0.0.1:${port}` });
      await waitForClusters([seed, a], () => agreed([seed, a], KIND, SHARDS), 'two agree');
      const version = a.topology.version;
      const epochs = a.heldShards(KIND).map((s) => a.epochOf(KIND, s)!);
      const lost = new Promise<void>((resolve) => a.on('lease-lost', () => resolve()));
      await seed.shutdown({ graceful: false });
      running = running.filter((c) => c !== seed);
      await lost;
      expect(a.canServe(KIND, a.heldShards(KIND)[0] ?? 0)).to.equal(false);
      const seed2 = await start('seed', { isSeed: true, ttlMs: 1000 }, port);
      await waitForClusters(
        [seed2, a],
        () => agreed([seed2, a], KIND, SHARDS),
        'both agree under the new seed',
      );
      expect(a.topology.version).to.be.greaterThan(version);
      const newEpochs = a.heldShards(KIND).map((s) => a.epochOf(KIND, s)!);
      expect(Math.min(...newEpochs)).to.be.greaterThan(Math.max(...epochs));
    });

    it('refuses a member of another cluster at once with JoinRefusedError', async () => {
      const port = await freePort();
      await start('seed', { isSeed: true }, port);
      const err = await Cluster.start({
        name: 'other',
        id: 'x',
        provider: new SeedProvider({ seed: `127.0.0.1:${port}` }),
        kinds: [{ name: KIND }],
        remote: { host: '127.0.0.1', port: 0 },
        logger: NOOP_LOGGER,
      }).catch((e) => e);
      expect(err).to.be.instanceOf(JoinRefusedError);
      expect(err.message).to.include('other');
    });

    for (const taken of ['a', 'seed']) {
      it(`a second process with the id of live member '${taken}' waits, then JoinTimeoutError naming the id; the live one keeps its place`, async () => {
        const port = await freePort();
        const seed = await start('seed', { isSeed: true }, port);
        const a = await start('a', { seed: `127.0.0.1:${port}` });
        const live = taken === 'seed' ? seed : a;
        const err = await start(taken, { seed: `127.0.0.1:${port}`, joinTimeoutMs: 800 }).catch(
          (e) => e,
        );
        expect(err).to.be.instanceOf(JoinTimeoutError);
        expect(err.message).to.include(`member id '${taken}'`);
        for (const c of [seed, a]) {
          expect(c.topology.members.map((m) => [m.id, m.address, m.status])).to.deep.include([
            taken,
            live.address,
            'up',
          ]);
        }
      });
    }

    it("a second process with a member's id joins once that member has left", async () => {
      const port = await freePort();
      await start('seed', { isSeed: true }, port);
      const a = await start('a', { seed: `127.0.0.1:${port}` });
      const second = start('a', { seed: `127.0.0.1:${port}`, joinTimeoutMs: 10_000 });
      await a.shutdown({ graceful: true });
      running = running.filter((c) => c !== a);
      const a2 = await second;
      expect(a2.topology.members.find((m) => m.id === 'a')?.address).to.equal(a2.address);
    });

    it('with no seed listening: retries, then JoinTimeoutError naming the seed and joinTimeoutMs', async () => {
      const seed = `127.0.0.1:${await freePort()}`;
      const err = await Cluster.start({
        name: 'dev',
        id: 'lonely',
        provider: new SeedProvider({ seed, joinTimeoutMs: 800, requestTimeoutMs: 200 }),
        kinds: [{ name: KIND }],
        remote: { host: '127.0.0.1', port: 0 },
        logger: NOOP_LOGGER,
      }).catch((e) => e);
      expect(err).to.be.instanceOf(JoinTimeoutError);
      expect(err.message).to.include(seed).and.include('joinTimeoutMs');
    });
  });
});

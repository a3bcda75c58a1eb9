import { EventEmitter } from 'node:events';
import { expect } from 'chai';
import { waitUntil, type Subscribe } from '@granary/testkit';
import { ActorSystem, Props, Remote, silentLogger } from '@granary/core';
import { GranaryClient } from '../../src/client/granary-client';
import { GatewayTopologySource } from '../../src/client/topology-source';
import type { Member } from '../../src/membership/topology';
import { TOPOLOGY_QUERY, TOPOLOGY_SERVICE } from '../../src/membership/topology-service';

const SECRET = 'a-secret-of-at-least-16-bytes';
const CLUSTER = 'hostile-gw';

/** A member on real gRPC answering the topology query with whatever `answer` gives. */
interface FakeGateway {
  system: ActorSystem;
  answer: () => unknown;
  asked: number;
  /** Emits 'asked' after each answer. */
  events: EventEmitter;
}

async function fakeGateway(): Promise<FakeGateway> {
  const system = new ActorSystem({ logger: silentLogger });
  await new Remote(system).start({
    host: '127.0.0.1',
    port: 0,
    clusterName: CLUSTER,
    secret: SECRET,
  });
  const gw: FakeGateway = { system, answer: () => undefined, asked: 0, events: new EventEmitter() };
  system.root.spawnNamed(
    Props.fromFunc((ctx) => {
      if (ctx.message !== TOPOLOGY_QUERY) return;
      gw.asked++;
      ctx.respond(gw.answer());
      gw.events.emit('asked');
    }),
    TOPOLOGY_SERVICE,
  );
  return gw;
}

const member = (id: string, address: string, kinds = ['echo']): Member => ({
  id,
  address,
  kinds,
  status: 'up',
  incarnation: 1,
});

/** Resolves once `check` holds, checked after each answer of `gateways`. */
function until(what: string, check: () => boolean, gateways: FakeGateway[]): Promise<void> {
  const on = gateways.map((g): Subscribe => (listener) => {
    g.events.on('asked', listener);
    return () => g.events.off('asked', listener);
  });
  return waitUntil(check, what, { on, timeoutMs: 10_000 });
}

describe('GranaryClient through a hostile gateway', function () {
  this.timeout(60_000);
  let hostile: FakeGateway;
  let a: FakeGateway;
  let b: FakeGateway;

  before(async () => {
    [hostile, a, b] = await Promise.all([fakeGateway(), fakeGateway(), fakeGateway()]);
  });
  after(() => Promise.all(all().map((g) => g?.system.shutdown())));
  const all = (): FakeGateway[] => [hostile, a, b];

  /** The real cluster's view at `version`: members a and b, and c when `withC`. */
  const real = (version: number, withC = false) => ({
    version,
    members: [
      member('a', a.system.address),
      member('b', b.system.address),
      ...(withC ? [member('c', '127.0.0.1:1')] : []),
    ],
    shardCounts: { echo: 8 },
  });

  it('is not pinned by a gateway answering version 2^53-1: later real topologies are taken', async () => {
    hostile.answer = () => ({
      version: Number.MAX_SAFE_INTEGER,
      members: [member('fake', hostile.system.address)],
      shardCounts: { echo: 8 },
    });
    a.answer = b.answer = () => real(10);
    const client = await GranaryClient.connect({
      name: CLUSTER,
      gateways: [hostile.system.address, a.system.address, b.system.address],
      secret: SECRET,
      requestTimeoutMs: 2000,
      topologyRefreshMs: 20,
      logger: silentLogger,
    });
    try {
      // The hostile gateway is asked first: its view is taken, then outvoted by a and b.
      await until('the real topology (v10)', () => client.topology.version === 10, all());
      a.answer = b.answer = () => real(11, true);
      await until('the next real topology (v11)', () => client.topology.version === 11, all());
      expect(client.topology.members.map((m) => m.id)).to.deep.equal(['a', 'b', 'c']);
      // The outvoted gateway is still asked in turn and its view is never taken again.
      const asked = hostile.asked;
      await until('the hostile gateway asked twice more', () => hostile.asked >= asked + 2, all());
      expect(client.topology.version).to.equal(11);
    } finally {
      await client.close();
    }
  });

  it('keeps the shard counts of hosted kinds only: a gateway naming new kinds every answer grows nothing', async () => {
    let round = 0;
    hostile.answer = () => {
      round++;
      const kinds = Array.from({ length: 1000 }, (_, i) => `k${round}-${i}`);
      return {
        version: 5 + round,
        members: [member('fake', hostile.system.address, kinds)],
        shardCounts: Object.fromEntries(kinds.map((k) => [k, 4])),
      };
    };
    const system = new ActorSystem({ logger: silentLogger });
    await new Remote(system).start({
      listen: false,
      advertisedHost: 'counts.client.invalid',
      port: 1,
      clusterName: CLUSTER,
      secret: SECRET,
    });
    const source = new GatewayTopologySource(
      system,
      [hostile.system.address],
      10,
      2000,
      silentLogger,
      CLUSTER,
    );
    try {
      await source.start();
      await until('20 answers', () => round >= 20, all());
      // Before: every answer's 1,000 counts were kept (20,000 and growing).
      expect(Object.keys(source.shardCounts()).length).to.be.at.most(1000);
      const hosted = new Set(source.topology().members.flatMap((m) => m.kinds));
      expect(Object.keys(source.shardCounts()).filter((k) => !hosted.has(k))).to.deep.equal([]);
      expect(Object.values(source.shardCounts())).to.include(4);
    } finally {
      await source.stop();
      await system.shutdown();
    }
  });
});

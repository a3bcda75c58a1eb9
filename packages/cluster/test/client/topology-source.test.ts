import { expect } from 'chai';
import { ActorSystem, Props, Remote, silentLogger } from '@granary/core';
import { GranaryClient } from '../../src/client/granary-client';
import { ConnectTimeoutError, MembershipRecordRejectedError } from '../../src/errors';
import { TOPOLOGY_QUERY, TOPOLOGY_SERVICE } from '../../src/membership/topology-service';

const SECRET = 'a-secret-of-at-least-16-bytes';

describe('GatewayTopologySource', function () {
  this.timeout(30_000);
  /** A member that answers the topology query with whatever the test sets (it holds the secret). */
  let gateway: ActorSystem;
  let answer: unknown;
  /** How many queries from now on go unanswered (the gateway is busy). */
  let silentAfter = Infinity;

  before(async () => {
    gateway = new ActorSystem({ logger: silentLogger });
    await new Remote(gateway).start({
      host: '127.0.0.1',
      port: 0,
      clusterName: 'gw',
      secret: SECRET,
    });
    gateway.root.spawnNamed(
      Props.fromFunc((ctx) => {
        if (ctx.message === TOPOLOGY_QUERY && silentAfter-- > 0) ctx.respond(answer);
      }),
      TOPOLOGY_SERVICE,
    );
  });
  afterEach(() => {
    silentAfter = Infinity;
  });
  after(() => gateway.shutdown());

  const member = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
    id: 'm1',
    address: gateway.address,
    kinds: ['echo'],
    status: 'up',
    incarnation: 3,
    ...over,
  });
  const connect = (requestTimeoutMs = 400): Promise<GranaryClient> =>
    GranaryClient.connect({
      name: 'gw',
      gateways: [gateway.address],
      secret: SECRET,
      requestTimeoutMs,
    });

  /** What connect() throws (undefined, after closing the client, if it connects). */
  const connectError = (requestTimeoutMs?: number): Promise<unknown> =>
    connect(requestTimeoutMs).then(
      async (c) => {
        await c.close();
        return undefined;
      },
      (e: unknown) => e,
    );

  it('takes a well-formed topology and the shard counts it states', async () => {
    answer = { version: 5, members: [member()], shardCounts: { echo: 8 } };
    const client = await connect();
    try {
      expect(client.topology.members.map((m) => m.id)).to.deep.equal(['m1']);
      expect(client.shardOf('echo', 'x')).to.be.below(8);
    } finally {
      await client.close();
    }
  });

  // Built when the test runs: the gateway's address is known only then.
  /** What is wrong, the answer, and the client's requestTimeoutMs if 400 ms is too short. */
  const malformed: Array<[string, () => unknown, number?]> = [
    ['a shard count of 0', () => ({ version: 1, members: [member()], shardCounts: { echo: 0 } })],
    [
      'a shard count of 2^40',
      () => ({ version: 1, members: [member()], shardCounts: { echo: 2 ** 40 } }),
    ],
    [
      'an address that is no string',
      () => ({ version: 1, members: [member({ address: 4000 })], shardCounts: {} }),
    ],
    [
      'kinds that are not names',
      () => ({ version: 1, members: [member({ kinds: [{}] })], shardCounts: {} }),
    ],
    [
      'a member with no incarnation',
      () => ({ version: 1, members: [member({ incarnation: 'x' })], shardCounts: {} }),
    ],
    ['a fractional version', () => ({ version: 1.5, members: [member()], shardCounts: {} })],
    ['shard counts that are a list', () => ({ version: 1, members: [member()], shardCounts: [8] })],
    [
      'members hosting over 16,384 distinct kinds',
      () => ({
        version: 1,
        members: Array.from({ length: 17 }, (_, m) =>
          member({ id: `m${m}`, kinds: Array.from({ length: 1024 }, (_, k) => `k${m}-${k}`) }),
        ),
        shardCounts: {},
      }),
      // ~200 KB to encode, send and decode: more than 400 ms on a busy CI machine.
      3000,
    ],
  ];
  for (const [what, snapshot, timeoutMs] of malformed) {
    it(`refuses a topology with ${what} (ConnectTimeoutError caused by MembershipRecordRejectedError)`, async () => {
      answer = snapshot();
      const err = await connectError(timeoutMs);
      expect(err).to.be.instanceOf(ConnectTimeoutError);
      expect((err as Error).cause).to.be.instanceOf(MembershipRecordRejectedError);
      expect(((err as Error).cause as Error).message).to.contain(
        `the topology from ${gateway.address} refused`,
      );
    });
  }

  it('names the refusal, not the timeout of a later attempt, when a gateway then falls silent', async () => {
    answer = { version: 1, members: [member()], shardCounts: { echo: 0 } };
    silentAfter = 1;
    const err = await connectError();
    expect(err).to.be.instanceOf(ConnectTimeoutError);
    expect((err as Error).cause).to.be.instanceOf(MembershipRecordRejectedError);
    expect((err as Error).message).to.contain('shardCounts of "echo"');
  });
});

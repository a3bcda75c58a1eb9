import { expect } from 'chai';
import type { TestCluster } from '@granary/testkit';
import type { Cluster } from '../../src/cluster';
import { startGrainCluster } from './fixtures/grain-cluster';

const TTL_S = 3;
const GRAINS = 60;
const CLUSTER = 'silent-owner';

interface Echo {
  member: string;
}

/**
 * A paused member (SIGSTOP: its kernel still takes the bytes, nothing reads them) answers none
 * of the calls sent to it, not even after its lease expires and its shards move on. Calls made
 * once its link is known to be silent (core's PeerSilence, after linkProbeMs) are held by the
 * caller and go to the survivor that claims the shard: they succeed within about the TTL
 * instead of waiting out their deadline.
 */
describe('calls to a paused owner (SIGSTOP) wait at the caller for the shard to move', function () {
  this.timeout(90_000);
  let tc: TestCluster | undefined;
  let client: Cluster | undefined;

  afterEach(async () => {
    await client?.shutdown({ graceful: false });
    await tc?.stop();
    client = undefined;
    tc = undefined;
  });

  it('calls made after the owner fell silent are answered by the survivors once its lease expires', async () => {
    ({ tc, client } = await startGrainCluster({
      size: 3,
      cluster: CLUSTER,
      ttlSeconds: TTL_S,
      shardCount: 32,
    }));
    const victim = tc.nodes[2]!;
    const onVictim: string[] = [];
    for (let i = 0; i < GRAINS; i++) {
      const r = await client.request<Echo>('echo', `g-${i}`, 'hi');
      if (r.member === victim.id) onVictim.push(`g-${i}`);
    }
    expect(onVictim.length, 'grains on the member to pause').to.be.greaterThan(1);
    const address = client.topology.members.find((m) => m.id === victim.id)!.address;
    const silence = client.system.remote!.silenceOf(address)!;

    tc.pause(victim);
    const pausedAt = Date.now();
    try {
      // Sent before anything is known: it waits unanswered (its bytes are what falls silent).
      const first = client
        .request<Echo>('echo', onVictim[0]!, 'first', { timeoutMs: 4 * TTL_S * 1000 })
        .then(
          (r) => r.member,
          (err: Error) => err.name,
        );
      while (silence.since === 0) {
        expect(Date.now() - pausedAt, 'the link marks the paused owner silent').to.be.below(5000);
        await new Promise((r) => setTimeout(r, 20));
      }
      const silentAfter = Date.now() - pausedAt;
      // Held past its deadline (well before the lease expires), a call says why it never went.
      const short = await client.request('echo', onVictim[1]!, 'short', { timeoutMs: 300 }).then(
        () => undefined,
        (err: Error) => err,
      );
      expect(short?.name).to.equal('DeadlineExceededError');
      expect((short?.cause as Error | undefined)?.name).to.equal('EndpointUnavailableError');
      expect((short?.cause as Error).message).to.match(/has read nothing written to it for \d+ ms/);
      const answers = await Promise.all(
        onVictim.slice(1).map((id) =>
          client!.request<Echo>('echo', id, 'held', { timeoutMs: 4 * TTL_S * 1000 }).then(
            (r) => ({ id, member: r.member, ms: Date.now() - pausedAt }),
            (err: Error) => ({ id, member: `failed: ${err.message}`, ms: Date.now() - pausedAt }),
          ),
        ),
      );
      const slowest = Math.max(...answers.map((a) => a.ms));
      console.log(
        `      owner silent ${silentAfter} ms after the pause; ${answers.length} calls made then, the last settled ${slowest} ms after the pause`,
      );
      for (const a of answers) {
        expect(a.member, `${a.id}`).to.be.oneOf(tc.nodes.slice(0, 2).map((n) => n.id));
      }
      // The lease expires after at most the TTL; the shards are claimed a moment later.
      expect(slowest).to.be.at.most(TTL_S * 1000 + 2000);
      tc.resume(victim);
      // The call sent into the pause: the woken member is fenced and never served it.
      expect(await first).to.be.oneOf(['DeadlineExceededError', 'NoHostError', 'node-0', 'node-1']);
    } finally {
      tc.resume(victim);
    }
  });
});

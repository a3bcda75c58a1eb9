import { expect } from 'chai';
import Redis from 'ioredis';
import { isAlive, redisSentinelUnavailable, startRedisSentinel } from '../src/index';

describe('startRedisSentinel', function () {
  this.timeout(60_000);
  const unavailable = redisSentinelUnavailable();

  before(function () {
    if (unavailable !== undefined) {
      console.log(`      skipped: ${unavailable}`);
      this.skip();
    }
  });

  it('starts a primary, a synced replica and Sentinel; a killed primary is replaced by the replica, with its data, and rejoins as a replica', async () => {
    const rs = await startRedisSentinel({ replicas: 1 });
    const client = new Redis({
      sentinels: [...rs.sentinels],
      name: rs.name,
      maxRetriesPerRequest: 1,
    });
    // Connection errors while the primary is down are expected; the assertions below tell.
    client.on('error', () => {});
    try {
      const first = await rs.primary();
      expect(first).to.equal(rs.servers[0]);
      await client.set('granary:replicated', 'yes');
      expect(await client.wait(1, 1000)).to.equal(1);

      const pid = first.pid!;
      await first.kill({ keepData: true });
      expect(isAlive(pid)).to.equal(false);
      const next = await rs.waitForFailover(first);
      expect(next).to.equal(rs.servers[1]);

      // ioredis asks Sentinel again and follows the new primary.
      let value: string | null = null;
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        value = await client.get('granary:replicated').catch(() => null);
        if (value !== null) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(value).to.equal('yes');

      await first.restart({ replicaOf: next });
      await rs.waitForReplicas(1);
      expect(await client.wait(1, 1000)).to.equal(1);
    } finally {
      client.disconnect();
      await rs.stop();
    }
  });
});

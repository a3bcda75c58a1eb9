import {
  redisSentinelUnavailable,
  respCommand,
  startRedisSentinel,
  type OpLoad,
  type RedisSentinelHandle,
} from '@granary/testkit';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { Durability } from '../../src/state/durability';
import { RedisStateStore } from '../../src/state/redis/redis-state-store';
import { figures, minAvailability, progress, storedStates, until } from './fixtures/op-counter';
import { OpProcesses } from './fixtures/op-processes';

const CALLERS = 200;
const GRAINS = 100;
/** Node processes hosting the grains (the issue measured 4; 3 keep a loaded 2-core CI box sane). */
const MEMBERS = 3;
const CALL_TIMEOUT_MS = 5000;
const COMMAND_TIMEOUT_MS = 1000;
/**
 * The replica is cut off this long before the primary is killed, so it misses the last writes
 * as a lagging replica does; the same fault for both levels. (Freezing it alone is not enough:
 * its kernel keeps receiving the stream, so the primary also drops the link.)
 */
const REPLICA_LAG_MS = 400;
const PROGRESS = 2000;

/**
 * A Sentinel failover under load with the members as node processes, the same run at two
 * levels: `'replicated'` waits for the replica per write batch, `'restart'` does not (Redis
 * replicates asynchronously).
 */
describe('durability under load: Sentinel failover (node processes, real etcd, Redis and Sentinel)', function () {
  this.timeout(180_000);
  const unavailable = redisSentinelUnavailable();

  before(function () {
    if (unavailable !== undefined) {
      console.log(`      skipped: ${unavailable}`);
      this.skip();
    }
  });
  let rs: RedisSentinelHandle | undefined;
  let cluster: OpProcesses | undefined;
  let admin: Redis | undefined;
  let reader: RedisStateStore | undefined;

  afterEach(async () => {
    await cluster?.stop();
    await reader?.close();
    admin?.disconnect();
    await rs?.stop();
    cluster = reader = admin = rs = undefined;
  });

  /** Starts the set, the members at `durability` and the load; fails over once. */
  async function failover(durability: Durability, settle: (load: OpLoad) => Promise<void>) {
    rs = await startRedisSentinel({ replicas: 1 });
    cluster = await OpProcesses.start({
      members: MEMBERS,
      cluster: `dur-failover-${durability}`,
      durability,
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
      sentinel: { sentinels: [...rs.sentinels], name: rs.name },
    });
    const load = cluster.load(CALLERS, GRAINS, CALL_TIMEOUT_MS).start();
    const old = await rs.primary();
    let promoted = old;
    const replica = rs.servers.find((s) => s !== old)!;
    let faultAt = 0;
    let promotedMs = 0;
    try {
      await progress(load, PROGRESS, 'load warms up');
      replica.pause();
      await respCommand(old.port, ['CLIENT', 'KILL', 'TYPE', 'replica']);
      await new Promise((resolve) => setTimeout(resolve, REPLICA_LAG_MS));
      faultAt = Date.now();
      await old.kill({ keepData: true });
      replica.resume();
      promoted = await rs.waitForFailover(old);
      promotedMs = Date.now() - faultAt;
      // The old primary comes back as a replica of the new one, as an orchestrator restarts it.
      await old.restart({ replicaOf: promoted });
      await rs.waitForReplicas(1);
      await settle(load);
    } finally {
      await load.stop();
    }
    // What the promoted primary holds, read from it directly.
    admin = new Redis(promoted.url);
    reader = new RedisStateStore({ url: promoted.url, durability: 'none' });
    const report = load.ledger.check(await storedStates(admin, reader, load.ledger.grainIds));
    // Ask every grain once: an activation that acknowledged more than the new primary holds
    // finds out now; a grain still unavailable (a replica catching up) is asked again.
    const codes = await cluster.probeAll(load.ledger.grainIds, CALL_TIMEOUT_MS);
    const detected = new Set(load.grainsFailedWith('ERR_STATE_LOST'));
    for (const [grain, code] of codes) if (code === 'ERR_STATE_LOST') detected.add(grain);
    const other = [...codes].filter(([, code]) => code !== 'ok' && code !== 'ERR_STATE_LOST');
    const marked = (await reader.stateLoss()).grains.length;
    console.log(
      `      ${figures(`${durability}, Sentinel failover, ${MEMBERS} node processes`, report, {
        detected: detected.size,
        recoveriesMs: [load.recoveryMs(faultAt)],
        minAvailability: minAvailability(load),
      })}; promoted after ${promotedMs} ms; ${marked} grains marked lost; node stores counted ${JSON.stringify(cluster.stats())}`,
    );
    expect(other, 'grains that neither answered nor said lost when probed').to.deep.equal([]);
    return { report, detected: [...detected], marked };
  }

  it("'replicated': a primary killed under load (its replica lagging) loses 0 acknowledged operations; every member's ioredis follows the new primary", async () => {
    const { report, detected } = await failover('replicated', (load) =>
      // Liveness, not the point of the test: on a loaded machine the restarted old primary's
      // full resync (every write waits for one replica) can take longer than 15 s.
      progress(load, PROGRESS, 'load carries on on the new primary', 45_000),
    );
    expect(report.lost, JSON.stringify(report.lostSample)).to.equal(0);
    expect(detected, 'grains that answered ERR_STATE_LOST').to.deep.equal([]);
    expect(report.regressionsServed, 'older state served').to.equal(0);
    expect(report.appliedTwice, 'operations applied twice').to.deep.equal([]);
  });

  it("'restart': the same failover loses acknowledged operations, and every grain that lost some is detected (StateLostError), none served older state", async () => {
    // The grains that lost writes are refused (policy 'refuse'), so the load stops making
    // progress once its callers meet them: wait for the first refusal.
    const { report, detected, marked } = await failover('restart', (load) =>
      until(() => load.grainsFailedWith('ERR_STATE_LOST').length > 0, 'a grain is refused', 30_000),
    );
    expect(report.lost, 'asynchronous replication lost writes').to.be.above(0);
    const missed = report.grainsWithLoss.filter((g) => !detected.includes(g));
    expect(missed, 'grains with lost operations not detected').to.deep.equal([]);
    expect(marked, 'grains marked lost in Redis').to.be.at.least(report.grainsWithLoss.length);
    expect(report.regressionsServed, 'older state served').to.equal(0);
  });
});

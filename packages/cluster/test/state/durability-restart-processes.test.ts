import { startRedis, type RedisHandle } from '@granary/testkit';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { RedisStateStore } from '../../src/state/redis/redis-state-store';
import { figures, minAvailability, progress, storedStates, until } from './fixtures/op-counter';
import { OpProcesses } from './fixtures/op-processes';

/** The issue's load: 200 callers making idempotent increments on 100 persistent grains. */
const CALLERS = 200;
const GRAINS = 100;
/** Node processes hosting the grains (the issue measured 4; 3 keep a loaded 2-core CI box sane). */
const MEMBERS = 3;
const CALL_TIMEOUT_MS = 5000;
/** Short, so calls fail fast while Redis is down. */
const COMMAND_TIMEOUT_MS = 500;
/** Redis stays down this long after each SIGKILL. */
const DOWN_MS = 300;
/** Progress (acknowledged operations) each phase waits for; the waits are bounded (until). */
const PROGRESS = 2000;

describe('durability under load: Redis SIGKILL (node processes, real etcd and Redis)', function () {
  this.timeout(150_000);
  let redis: RedisHandle | undefined;
  let cluster: OpProcesses | undefined;
  let admin: Redis | undefined;
  let reader: RedisStateStore | undefined;

  afterEach(async () => {
    await cluster?.stop();
    await reader?.close();
    admin?.disconnect();
    await redis?.stop();
    cluster = reader = admin = redis = undefined;
  });

  it("default durability ('restart') on Redis as deploy/ runs it (appendonly yes, appendfsync always): 3 SIGKILLs under load lose 0 acknowledged operations", async () => {
    redis = await startRedis({ appendfsync: 'always' });
    admin = new Redis(redis.url);
    admin.on('error', () => {});
    // The nodes use the default level: no durability in their config would mean 'restart'
    // too, but it is the option under test, so it is said.
    cluster = await OpProcesses.start({
      members: MEMBERS,
      cluster: 'dur-restart',
      durability: 'restart',
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
      redisUrl: redis.url,
    });
    const load = cluster.load(CALLERS, GRAINS, CALL_TIMEOUT_MS).start();
    const faults: number[] = [];
    try {
      await progress(load, PROGRESS, 'load warms up');
      for (let kill = 0; kill < 3; kill++) {
        faults.push(Date.now());
        await redis.kill({ keepData: true });
        await new Promise((resolve) => setTimeout(resolve, DOWN_MS));
        await redis.restart();
        await progress(load, PROGRESS, `load recovers after SIGKILL ${kill + 1}`);
      }
    } finally {
      await load.stop();
    }
    reader = new RedisStateStore({ url: redis.url });
    const report = load.ledger.check(await storedStates(admin, reader, load.ledger.grainIds));
    const detected = load.grainsFailedWith('ERR_STATE_LOST').length;
    const stats = cluster.stats();
    console.log(
      `      ${figures(`restart x3 SIGKILL, ${MEMBERS} node processes`, report, {
        detected,
        recoveriesMs: faults.map((at) => load.recoveryMs(at)),
        minAvailability: minAvailability(load),
      })}; node stores counted ${JSON.stringify(stats)}`,
    );
    expect(report.lost, JSON.stringify(report.lostSample)).to.equal(0);
    expect(report.regressionsServed, 'older state served').to.equal(0);
    expect(report.appliedTwice, 'operations applied twice').to.deep.equal([]);
    expect(detected, 'grains that answered ERR_STATE_LOST').to.equal(0);
    expect(stats.lostGrains, 'grains the node stores found lost').to.equal(0);
    expect(report.failed, 'calls failed while Redis was down').to.be.above(0);
  });

  it("durability 'none' on a Redis without persistence: a SIGKILL surfaces StateLostError for every grain, no reset state is served until an operator accepts, then the grains carry on", async () => {
    redis = await startRedis({ appendonly: false });
    admin = new Redis(redis.url);
    admin.on('error', () => {});
    cluster = await OpProcesses.start({
      members: MEMBERS,
      cluster: 'dur-none',
      durability: 'none',
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
      redisUrl: redis.url,
    });
    const load = cluster.load(CALLERS, GRAINS, CALL_TIMEOUT_MS).start();
    let killedAt = 0;
    let acceptedAt = 0;
    let codes = new Map<string, string>();
    try {
      await progress(load, PROGRESS, 'load warms up');
      killedAt = Date.now();
      await redis.kill();
      await new Promise((resolve) => setTimeout(resolve, DOWN_MS));
      await redis.restart(); // empty: no append-only file, no snapshot
      await until(
        () => load.grainsFailedWith('ERR_STATE_LOST').length > 0,
        'the load meets StateLostError',
        30_000,
      );
      // Every grain is refused (a load caller waits on one refused grain, so ask every grain).
      codes = await cluster.probeAll(load.ledger.grainIds, CALL_TIMEOUT_MS);
      const notRefused = [...codes].filter(([, code]) => code !== 'ERR_STATE_LOST');
      expect(notRefused, 'grains not refused after the store lost everything').to.deep.equal([]);
      // Refused, not reset: a second of load acknowledges nothing.
      const ackedWhileRefused = load.acknowledged;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(load.acknowledged, 'acknowledged while refused').to.equal(ackedWhileRefused);
      // The operator decides, through a store of their own: carry on from what Redis holds.
      reader = new RedisStateStore({ url: redis.url, durability: 'none' });
      const loss = await reader.stateLoss();
      expect(loss.store?.previousId, 'the store-wide loss is recorded in Redis').to.be.a('string');
      load.ledger.allowRegressions();
      acceptedAt = Date.now();
      expect((await reader.acceptStateLoss()).store).to.equal(true);
      await progress(load, PROGRESS, 'load carries on after the loss is accepted');
    } finally {
      await load.stop();
    }
    const report = load.ledger.check(await storedStates(admin, reader!, load.ledger.grainIds));
    const stats = cluster.stats();
    console.log(
      `      ${figures(`none x1 SIGKILL (persistence off), ${MEMBERS} node processes`, report, {
        detected: [...codes.values()].filter((c) => c === 'ERR_STATE_LOST').length,
        recoveriesMs: [load.recoveryMs(killedAt)],
        minAvailability: minAvailability(load),
      })}; operator accepted ${acceptedAt - killedAt} ms after the kill; node stores counted ${JSON.stringify(stats)}`,
    );
    expect(report.regressionsServed, 'older state served before the operator accepted').to.equal(0);
    expect(report.lost, 'the kill lost acknowledged operations').to.be.above(0);
    expect(report.grainsWithLoss.length, 'grains that lost operations').to.equal(GRAINS);
    expect(stats.lostStores, 'node stores that saw the store-wide loss').to.be.at.least(1);
    expect(stats.errorLines, 'error lines the node stores logged').to.be.at.least(1);
    expect(Object.keys(report.failedByCode)).to.include('ERR_STATE_LOST');
  });
});

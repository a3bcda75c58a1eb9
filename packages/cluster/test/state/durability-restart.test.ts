import { errorCode, startRedis, type RedisHandle } from '@granary/testkit';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { RedisStateStore } from '../../src/state/redis/redis-state-store';
import type { MemoryNodes } from '../grains/memory-nodes';
import {
  figures,
  minAvailability,
  opLoad,
  OPS_KIND,
  progress,
  startOpNodes,
  storedStates,
  until,
} from './fixtures/op-counter';

/** The load: 200 callers making idempotent increments on 100 persistent grains. */
const CALLERS = 200;
const GRAINS = 100;
const CALL_TIMEOUT_MS = 3000;
/** Short, so calls fail fast while Redis is down and the run stays well under a minute. */
const COMMAND_TIMEOUT_MS = 500;
/** Redis stays down this long after each SIGKILL. */
const DOWN_MS = 300;

describe('durability under load: Redis SIGKILL (in-process members, real Redis)', function () {
  this.timeout(90_000);
  let redis: RedisHandle | undefined;
  let store: RedisStateStore | undefined;
  let nodes: MemoryNodes | undefined;
  let admin: Redis | undefined;

  afterEach(async () => {
    await nodes?.stopAll();
    await store?.close();
    admin?.disconnect();
    await redis?.stop();
    nodes = store = admin = redis = undefined;
  });

  it("default durability ('restart', append-only file): 3 SIGKILLs under load lose 0 acknowledged operations", async () => {
    redis = await startRedis(); // appendonly yes, appendfsync no (written before each reply)
    admin = new Redis(redis.url);
    admin.on('error', () => {});
    store = new RedisStateStore({ url: redis.url, commandTimeoutMs: COMMAND_TIMEOUT_MS });
    nodes = await startOpNodes(store, CALL_TIMEOUT_MS);
    const load = opLoad(nodes, CALLERS, GRAINS, CALL_TIMEOUT_MS).start();
    const faults: number[] = [];
    try {
      await progress(load, 2000, 'load warms up');
      for (let kill = 0; kill < 3; kill++) {
        faults.push(Date.now());
        await redis.kill({ keepData: true });
        await new Promise((resolve) => setTimeout(resolve, DOWN_MS));
        await redis.restart();
        await progress(load, 3000, `load recovers after SIGKILL ${kill + 1}`);
      }
    } finally {
      await load.stop();
    }
    const report = load.ledger.check(await storedStates(admin, store, load.ledger.grainIds));
    const detected = load.grainsFailedWith('ERR_STATE_LOST').length;
    console.log(
      `      ${figures('restart x3 SIGKILL', report, {
        detected,
        recoveriesMs: faults.map((at) => load.recoveryMs(at)),
        minAvailability: minAvailability(load),
      })}`,
    );
    expect(report.lost, JSON.stringify(report.lostSample)).to.equal(0);
    expect(report.regressionsServed).to.equal(0);
    expect(report.appliedTwice).to.deep.equal([]);
    expect(detected).to.equal(0);
    expect(store.lossCounts.lostGrains).to.equal(0);
    expect(report.failed, 'calls failed while Redis was down').to.be.above(0);
  });

  it("durability 'none' on a Redis without persistence: a SIGKILL surfaces StateLostError for every affected grain, serves no reset state until an operator accepts, then the grains carry on", async () => {
    redis = await startRedis({ appendonly: false });
    admin = new Redis(redis.url);
    admin.on('error', () => {});
    store = new RedisStateStore({
      url: redis.url,
      durability: 'none',
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
    });
    nodes = await startOpNodes(store, CALL_TIMEOUT_MS);
    const load = opLoad(nodes, CALLERS, GRAINS, CALL_TIMEOUT_MS).start();
    let killedAt = 0;
    let acceptedAt = 0;
    let marked = 0;
    try {
      await progress(load, 2000, 'load warms up');
      killedAt = Date.now();
      await redis.kill();
      await new Promise((resolve) => setTimeout(resolve, DOWN_MS));
      await redis.restart(); // empty: no append-only file, no snapshot
      await until(
        () => load.grainsFailedWith('ERR_STATE_LOST').length > 0,
        'the load meets StateLostError',
      );
      // Every grain is refused (the load's callers each wait on one refused grain, so ask all).
      for (const grain of load.ledger.grainIds) {
        const err = await nodes.nodes[0]!.request(
          OPS_KIND,
          grain,
          { c: 'probe', s: 1 },
          {
            timeoutMs: CALL_TIMEOUT_MS,
          },
        ).then(() => 'ok', errorCode);
        expect(err, grain).to.equal('ERR_STATE_LOST');
      }
      // Refused, not reset: a second of load acknowledges nothing.
      const ackedWhileRefused = load.acknowledged;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(load.acknowledged, 'acknowledged while refused').to.equal(ackedWhileRefused);
      const loss = await store.stateLoss();
      marked = loss.grains.length;
      expect(loss.store?.previousId, 'the store-wide loss is recorded').to.be.a('string');
      // The operator decides: carry on from what the store holds (nothing).
      load.ledger.allowRegressions();
      acceptedAt = Date.now();
      const accepted = await store.acceptStateLoss();
      expect(accepted.store).to.equal(true);
      await progress(load, 2000, 'load carries on after the loss is accepted');
    } finally {
      await load.stop();
    }
    const report = load.ledger.check(await storedStates(admin, store, load.ledger.grainIds));
    console.log(
      `      ${figures('none x1 SIGKILL (persistence off)', report, {
        detected: GRAINS, // every grain answered ERR_STATE_LOST (probed above)
        recoveriesMs: [load.recoveryMs(killedAt)],
        minAvailability: minAvailability(load),
      })}; operator accepted ${acceptedAt - killedAt} ms after the kill; ${marked} grains marked lost; store counted ${JSON.stringify(store.lossCounts)}`,
    );
    expect(report.regressionsServed, 'older state served before the operator accepted').to.equal(0);
    expect(report.lost, 'the kill lost acknowledged operations').to.be.above(0);
    expect(report.grainsWithLoss.length, 'every grain lost operations').to.equal(GRAINS);
    expect(store.lossCounts.lostStores).to.equal(1);
    expect(store.lossCounts.lostGrains).to.be.at.least(1);
    expect(Object.keys(report.failedByCode)).to.include('ERR_STATE_LOST');
    expect(await admin.exists(store.keyOf(OPS_KIND, 'g0'))).to.equal(1);
  });
});

import type { RedisHandle, TestCluster } from '@granary/testkit';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { Cluster } from '../../src/cluster';
import type { CatchUp } from '../../src/reminders/reminder';
import { FireLedger } from './fire-ledger';
import { startReminderCluster, type ReminderCluster } from './fixtures/reminder-cluster';

/**
 * The acceptance scenario at test size (the 10,000-reminder, 60 s run is the
 * `reminders-soak` benchmark, with the same checks): REMINDERS reminders with a 1 s period on 3
 * node processes over real etcd and Redis; steady state, SIGKILL of a node, a join, a graceful
 * leave, a Redis restart, one after the other on the same reminders.
 */
const REMINDERS = 600;
const PERIOD_MS = 1000;
const TTL_S = 3;
const SHARDS = 32;
const CLUSTER = 'rem-acc';
/** Grains passivate between fires: idle this long (well under the period). */
const IDLE_MS = 300;
/** Fires due before `now - SETTLE_MS` must have arrived when a check runs. */
const SETTLE_MS = 600;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Waits `ms` while measuring how late this process's 10 ms timers fire: the p99 lateness (ms) of
 * a host whose CPU other processes take (a CI machine running other builds), which the nodes'
 * fires suffer alike.
 */
async function timerLateness(ms: number): Promise<number> {
  const late: number[] = [];
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const due = performance.now() + 10;
    await sleep(10);
    late.push(performance.now() - due);
  }
  late.sort((x, y) => x - y);
  return Math.round(late[Math.floor(late.length * 0.99)] ?? 0);
}

describe('reminders on etcd + Redis, nodes as processes (acceptance)', function () {
  this.timeout(180_000);
  let world: ReminderCluster | undefined;
  let redis: RedisHandle;
  let tc: TestCluster;
  let client: Cluster;
  /** Due time of tick 0 per reminder, and its policy. */
  const base = new Map<string, number>();
  const policy = new Map<string, CatchUp>();
  const ledger = new FireLedger((key, tick) => base.get(key)! + tick * PERIOD_MS);
  const keys = (): string[] => [...base.keys()];
  /**
   * At most once per tick: a tick the SIGKILLed node had claimed but not yet delivered when it
   * died is never fired again. Those can only be ticks of its reminders due just before the kill
   * (a claim and a local delivery take milliseconds); counted and reported, not as lost.
   */
  let killed: { node: string; at: number; keys: Set<string> } | undefined;
  const inDoubt = new Map<string, number>();
  const claimedAtKill = (key: string, tick: number): boolean => {
    if (!killed?.keys.has(key)) return false;
    const due = base.get(key)! + tick * PERIOD_MS;
    return due <= killed.at && due > killed.at - 2 * PERIOD_MS;
  };

  /** Every tick due before the cut arrived once or was reported skipped; none twice. */
  function check(what: string, cut = Date.now() - SETTLE_MS): { skipped: number; lost: number } {
    ledger.update(tc);
    let skipped = 0;
    let lost = 0;
    for (const key of keys()) {
      const g = ledger.gaps(key, cut, (tick) => claimedAtKill(key, tick));
      inDoubt.set(key, g.doubt);
      if (policy.get(key) === 'all') expect(g.skipped, `${what}: ${key} skipped`).to.equal(0);
      skipped += g.skipped;
      lost += g.lost;
    }
    expect(ledger.duplicates, `${what}: ticks delivered twice`).to.equal(0);
    expect(
      lost,
      `${what}: ticks neither delivered nor reported skipped (${FireLedger.why(tc)})`,
    ).to.equal(0);
    return { skipped, lost };
  }

  before(async () => {
    world = await startReminderCluster({
      nodes: 3,
      cluster: CLUSTER,
      ttlSeconds: TTL_S,
      shardCount: SHARDS,
      idleTimeoutMs: IDLE_MS,
    });
    ({ redis, tc, client } = world);
  });
  after(() => world?.stop());

  it(`steady: ${REMINDERS} reminders (1 s) over 3 nodes fire exactly once per tick, p99 tardiness bounded, grains passivate between fires`, async () => {
    const start = Date.now() + 1500;
    await Promise.all(
      Array.from({ length: REMINDERS }, (_, i) => {
        const id = `g${i}`;
        const catchUp: CatchUp = i % 2 === 0 ? 'all' : 'skip';
        // Spread over the period, so the load is even.
        const dueAt = start + Math.floor((i * PERIOD_MS) / REMINDERS);
        base.set(`${id}/beat`, dueAt);
        policy.set(`${id}/beat`, catchUp);
        return client.reminders('beat', id).set('beat', { dueAt, periodMs: PERIOD_MS, catchUp });
      }),
    );
    const hostLate = await timerLateness(8000);
    const { skipped } = check('steady');
    expect(skipped, 'skipped while no node failed').to.equal(0);
    const fires = ledger.count();
    const p99 = ledger.lateness(0.99, start + PERIOD_MS);
    const p50 = ledger.lateness(0.5, start + PERIOD_MS);
    const act = FireLedger.activations(tc);
    console.log(
      `      steady: ${fires} fires, tardiness p50 ${p50} ms p99 ${p99} ms, ${act.activations} activations, ${act.deactivations} deactivations; this host's timers p99 ${hostLate} ms late`,
    );
    expect(fires).to.be.greaterThan(REMINDERS * 5);
    // The bound is 50 ms (measured: p99 12-51 ms here, see the reminders-soak
    // benchmark); a test on a machine shared with other builds allows twice that, plus how late
    // the host ran this process's own timers meanwhile (CI beside other sessions: p99 189 ms).
    expect(p99, `p99 tardiness; host timers p99 ${hostLate} ms late`).to.be.at.most(100 + hostLate);
    // Each fire found its grain passivated (activations ~ fires; the first fire of each
    // activates too): a grain is woken by its reminder and sleeps in between.
    expect(act.activations).to.be.greaterThan(fires * 0.9);
    expect(act.deactivations).to.be.greaterThan(fires * 0.8);
  });

  it('SIGKILL one of 3: its reminders fire on survivors within period + TTL + 1 s; no tick twice; all loses none, skip reports the skipped', async () => {
    const victim = tc.live[0]!;
    ledger.update(tc);
    const onVictim = keys().filter((k) => ledger.byKey.get(k)!.at(-1)!.node === victim.id);
    expect(onVictim.length).to.be.greaterThan(REMINDERS / 6);
    killed = { node: victim.id, at: Date.now(), keys: new Set(onVictim) };
    await tc.kill(victim);
    const killedAt = Date.now();
    await sleep(PERIOD_MS + TTL_S * 1000 + 3000);
    const { skipped } = check('after SIGKILL');
    let worst = 0;
    for (const key of onVictim) {
      const after = ledger.byKey.get(key)!.filter((f) => f.node !== victim.id && f.at > killedAt);
      expect(after.length, `${key} resumed`).to.be.greaterThan(0);
      worst = Math.max(worst, Math.min(...after.map((f) => f.at)) - killedAt);
    }
    const undelivered = [...inDoubt.values()].reduce((a, b) => a + b, 0);
    console.log(
      `      SIGKILL: ${undelivered} ticks the killed node had claimed and not delivered (due in its last 2 s, at most once)`,
    );
    expect(undelivered).to.be.at.most(onVictim.length);
    console.log(
      `      SIGKILL: ${onVictim.length} reminders moved, first fire on a survivor within ${worst} ms of the kill (bound ${PERIOD_MS + TTL_S * 1000 + 1000} ms); ${skipped} ticks reported skipped (catchUp skip)`,
    );
    expect(worst).to.be.at.most(PERIOD_MS + TTL_S * 1000 + 1000);
    expect(
      skipped,
      'the skip reminders reported the ticks missed while nobody owned them',
    ).to.be.greaterThan(0);
  });

  it('a join moves ~1/N of the reminders with their shards, no tick twice', async () => {
    const joinedAt = Date.now();
    const added = await tc.addNode();
    await tc.waitForConvergence();
    await sleep(4000);
    check('after join');
    const moved = keys().filter((k) =>
      ledger.byKey.get(k)!.some((f) => f.node === added.id && f.at > joinedAt),
    ).length;
    console.log(`      join: ${moved} of ${REMINDERS} reminders moved to the new member`);
    expect(moved).to.be.within(REMINDERS * 0.15, REMINDERS * 0.55);
  });

  it('a graceful leave hands its reminders over with no missed tick', async () => {
    ledger.update(tc);
    const before = check('before leave').skipped;
    const leaving = tc.live[0]!;
    const leftAt = Date.now();
    await tc.stopNode(leaving);
    await tc.waitForConvergence();
    await sleep(3000);
    const after = check('after leave').skipped;
    const moved = keys().filter((k) =>
      ledger.byKey.get(k)!.some((f) => f.node !== leaving.id && f.at > leftAt),
    ).length;
    console.log(
      `      leave: reminders firing after the leave: ${moved}; ticks skipped meanwhile: ${after - before}`,
    );
    expect(after - before, 'ticks missed across the graceful hand-over').to.equal(0);
  });

  it('Redis restart: fires resume with the catch-up policy, no tick twice', async () => {
    const admin = new Redis(redis.url);
    try {
      await admin.config('SET', 'save', '3600 1'); // SIGTERM saves: a clean restart keeps data
    } finally {
      admin.disconnect();
    }
    const before = check('before restart').skipped;
    const restartAt = Date.now();
    await redis.restart();
    const backAt = Date.now();
    await sleep(4000);
    const after = check('after Redis restart').skipped;
    const resumed = keys().filter((k) => ledger.byKey.get(k)!.some((f) => f.at > backAt)).length;
    console.log(
      `      Redis restart: down ${backAt - restartAt} ms; ${resumed}/${REMINDERS} reminders fired after it; ${after - before} ticks skipped (catchUp skip)`,
    );
    expect(resumed).to.equal(REMINDERS);
  });
});

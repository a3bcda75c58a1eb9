import type { TestCluster } from '@granary/testkit';
import { expect } from 'chai';
import type { Cluster } from '../../src/cluster';
import { FireLedger } from './fire-ledger';
import { startReminderCluster, type ReminderCluster } from './fixtures/reminder-cluster';

const REMINDERS = 120;
const PERIOD_MS = 1000;
const TTL_S = 2;
const SHARDS = 32;
const CLUSTER = 'rem-paused';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('reminders while their owner is SIGSTOPped past its lease (node processes, etcd, Redis)', function () {
  this.timeout(60_000);
  let world: ReminderCluster | undefined;
  let tc: TestCluster;
  let client: Cluster;
  const base = new Map<string, number>();
  const ledger = new FireLedger((key, tick) => base.get(key)! + tick * PERIOD_MS);

  async function setReminders(prefix: string, n: number, from: number): Promise<void> {
    await Promise.all(
      Array.from({ length: n }, (_, i) => {
        const id = `${prefix}${i}`;
        const dueAt = from + Math.floor((i * PERIOD_MS) / n);
        base.set(`${id}/beat`, dueAt);
        return client
          .reminders('beat', id)
          .set('beat', { dueAt, periodMs: PERIOD_MS, catchUp: 'all' });
      }),
    );
  }

  before(async () => {
    world = await startReminderCluster({
      nodes: 3,
      cluster: CLUSTER,
      ttlSeconds: TTL_S,
      shardCount: SHARDS,
      idleTimeoutMs: 300,
    });
    ({ tc, client } = world);
  });
  after(() => world?.stop());

  it('fire on survivors within period + 2×TTL + 1 s, lose no tick but one the paused owner claimed and reports undelivered (catchUp all), deliver none twice, also after the owner wakes; one set during the pause fires', async () => {
    await setReminders('g', REMINDERS, Date.now() + 1000);
    await sleep(3000);
    ledger.update(tc);
    const victim = tc.live[0]!;
    const onVictim = [...base.keys()].filter(
      (k) => ledger.byKey.get(k)?.at(-1)?.node === victim.id,
    );
    expect(onVictim.length).to.be.greaterThan(REMINDERS / 6);
    const pausedAt = Date.now();
    tc.pause(victim);
    // Set during the failover: some land on shards the paused member still holds in etcd.
    await setReminders('late', 60, Date.now() + 500);
    await sleep(3 * TTL_S * 1000);
    tc.resume(victim);
    await sleep(5000);
    ledger.update(tc);
    let worst = 0;
    for (const key of onVictim) {
      const after = ledger.byKey.get(key)!.filter((f) => f.node !== victim.id && f.at > pausedAt);
      expect(after.length, `${key} fired on a survivor`).to.be.greaterThan(0);
      worst = Math.max(worst, Math.min(...after.map((f) => f.at)) - pausedAt);
    }
    let lost = 0;
    for (const key of base.keys()) lost += ledger.gaps(key, Date.now() - 1000).lost;
    const late = [...base.keys()].filter((k) => k.startsWith('late'));
    const lateFired = late.filter((k) => (ledger.byKey.get(k) ?? []).length > 0).length;
    console.log(
      `      ${onVictim.length} reminders on the paused member; first fire on a survivor within ${worst} ms; lost ${lost}; duplicates ${ledger.duplicates}; set during the pause: ${lateFired}/${late.length} fired (${FireLedger.why(tc)})`,
    );
    expect(ledger.duplicates, 'ticks delivered twice').to.equal(0);
    // A tick the owner claimed just before the pause, its call then failing, is lost by the
    // at-most-once rule (a claimed tick is never fired again) and reported as undelivered by
    // the owner when it wakes; no other tick may be missing.
    expect(lost, `ticks lost (${FireLedger.why(tc)})`).to.be.at.most(FireLedger.undelivered(tc));
    expect(lateFired).to.equal(late.length);
    expect(worst).to.be.at.most(PERIOD_MS + 2 * TTL_S * 1000 + 1000);
  });
});

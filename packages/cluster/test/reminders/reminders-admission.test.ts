import { errorsOnlyLogger } from '@granary/testkit';
import { expect } from 'chai';
import { Cluster } from '../../src/cluster';
import type { Grain, GrainContext } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';
import { MemoryReminderStore } from '../../src/reminders/memory/memory-reminder-store';
import { isReminderFire } from '../../src/reminders/reminder';

const MAX_IN_FLIGHT = 3;
const HOLD_MS = 150;
const PERIOD_MS = 200;
const REMINDERS = 20;

/** Turns running now, the most seen at once, and the ticks each grain received. */
let running = 0;
let most = 0;
const ticks = new Map<string, number[]>();

/** Holds every fire's turn HOLD_MS: the member can deliver far fewer fires than are due. */
class Slow implements Grain {
  async receive(ctx: GrainContext): Promise<unknown> {
    const m = ctx.message;
    if (!isReminderFire(m)) return undefined;
    running++;
    most = Math.max(most, running);
    const list = ticks.get(ctx.identity) ?? [];
    list.push(m.tick);
    ticks.set(ctx.identity, list);
    await new Promise((r) => setTimeout(r, HOLD_MS));
    running--;
    return undefined;
  }
}

describe('reminders: fires in flight are bounded (maxFiresInFlight)', function () {
  this.timeout(60_000);
  let cluster: Cluster;

  before(async () => {
    cluster = await Cluster.start({
      name: 'reminders-admission',
      id: 'adm',
      provider: new MemoryProvider(new MemoryClusterTable(), { ttlMs: 10_000 }),
      kinds: [kind('slow', () => new Slow(), { shardCount: 8 })],
      reminders: { store: new MemoryReminderStore(), maxFiresInFlight: MAX_IN_FLIGHT },
      logger: errorsOnlyLogger,
    });
  });
  after(async () => {
    await cluster?.shutdown({ graceful: false });
  });

  it('a member over its bound delays fires (skips reported) instead of claiming ticks it cannot deliver', async () => {
    // Offered: 20 reminders every 200 ms = 100 fires/s; deliverable: 3 per 150 ms = 20/s.
    const ids = Array.from({ length: REMINDERS }, (_, i) => `s${i}`);
    await Promise.all(
      ids.map((id) =>
        cluster
          .reminders('slow', id)
          .set('r', { dueInMs: 20, periodMs: PERIOD_MS, catchUp: 'skip' }),
      ),
    );
    // Every reminder gets its turn (the waiting ones go in the order they came due).
    const t0 = Date.now();
    while (!ids.every((id) => (ticks.get(id)?.length ?? 0) >= 2)) {
      if (Date.now() - t0 > 30_000) {
        const short = ids.filter((id) => (ticks.get(id)?.length ?? 0) < 2);
        throw new Error(`within 30 s, ${short.length} reminders fired < 2 times: ${short}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    await Promise.all(ids.map((id) => cluster.reminders('slow', id).delete('r')));
    const stats = cluster.reminderStats()!;
    expect(most, 'turns running at once').to.be.within(1, MAX_IN_FLIGHT);
    // Nothing claimed was refused or lost: every fire reached its grain.
    expect(stats.undelivered, 'undelivered fires').to.equal(0);
    expect(stats.taken, 'ticks claimed twice').to.equal(0);
    // The overload shows as late fires and reported skips.
    expect(stats.skipped, 'skipped ticks reported').to.be.greaterThan(0);
    for (const id of ids) {
      const got = ticks.get(id)!;
      const increasing = got.every((t, i) => i === 0 || t > got[i - 1]!);
      expect(increasing, `${id} ticks ${got} strictly increasing`).to.equal(true);
    }
  });
});

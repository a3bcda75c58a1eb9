import { errorsOnlyLogger } from '@granary/testkit';
import { expect } from 'chai';
import { Cluster } from '../../src/cluster';
import type { GrainContext } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';
import { ReminderStoreUnavailableError } from '../../src/reminders/errors';
import { MemoryReminderStore } from '../../src/reminders/memory/memory-reminder-store';
import { isReminderFire } from '../../src/reminders/reminder';
import type { ClaimResult, TickClaim } from '../../src/reminders/reminder-store';

/**
 * A store whose Redis applies some claims and then loses the reply (a restart that closes the
 * connection before the reply is written, a command that times out on the caller's side and
 * runs anyway): the owner sees the claim fail although the store took it.
 */
class LostReplies extends MemoryReminderStore {
  lose = 0;
  lost = 0;

  override async claim(
    kind: string,
    shard: number,
    epoch: number,
    claims: readonly TickClaim[],
  ): Promise<ClaimResult[]> {
    const results = await super.claim(kind, shard, epoch, claims);
    if (this.lose > 0) {
      this.lose--;
      this.lost++;
      throw new ReminderStoreUnavailableError('reminder store: connection closed (test)');
    }
    return results;
  }
}

describe('reminders: a claim whose reply was lost', function () {
  this.timeout(30_000);

  it("still delivers the tick once (catchUp 'all'): the owner's repeated claim is its own", async () => {
    const store = new LostReplies();
    const ticks: number[] = [];
    const node = await Cluster.start({
      name: 'lost-reply',
      id: 'n1',
      provider: new MemoryProvider(new MemoryClusterTable(), { ttlMs: 2000 }),
      kinds: [
        kind(
          'beat',
          () => ({
            receive(ctx: GrainContext): undefined {
              if (isReminderFire(ctx.message)) ticks.push(ctx.message.tick);
              return undefined;
            },
          }),
          { shardCount: 4 },
        ),
      ],
      reminders: { store },
      logger: errorsOnlyLogger,
    });
    try {
      await node.reminders('beat', 'g').set('r', { dueInMs: 50, periodMs: 150, catchUp: 'all' });
      // Ticks 1 and 2 are each claimed once with the reply lost, then claimed again.
      const until = async (check: () => boolean, what: string): Promise<void> => {
        const t0 = Date.now();
        while (!check()) {
          if (Date.now() - t0 > 15_000) throw new Error(`timed out: ${what} (ticks ${ticks})`);
          await new Promise((r) => setTimeout(r, 10));
        }
      };
      await until(() => ticks.length >= 1, 'tick 0');
      store.lose = 2;
      await until(() => ticks.length >= 5, 'ticks 0-4');
      expect(store.lost).to.equal(2);
      expect(ticks.slice(0, 5)).to.deep.equal([0, 1, 2, 3, 4]);
      expect(node.reminderStats()!.taken).to.equal(0);
    } finally {
      await node.shutdown({ graceful: false });
    }
  });
});

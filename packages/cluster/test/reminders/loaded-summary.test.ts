import { expect } from 'chai';
import { listLoaded, type LoadedReminder } from '../../src/reminders/internal/loaded-summary';
import type { ShardReminders } from '../../src/reminders/internal/shard-loads';

/** Shards of kind `k` holding `n` reminders, their identities in no order (what listLoaded reads). */
function shardsOf(n: number, shardCount: number): ShardReminders[] {
  const shards = Array.from({ length: shardCount }, (_, shard) => ({
    kind: 'k',
    shard,
    epoch: 1,
    live: new Map(),
    loading: false,
    pending: new Set<string>(),
    batch: [],
  })) as unknown as ShardReminders[];
  for (let i = 0; i < n; i++) {
    // A scrambled order: identities are not visited sorted.
    const id = `g${(i * 7919) % n}`;
    const name = i % 3 === 0 ? 'b' : 'a';
    const reminder = {
      id,
      name,
      job: false,
      stored: { spec: { periodMs: 1000 }, last: -1 },
      nextDueAt: () => 0,
    };
    shards[i % shardCount]!.live.set(`${id}/${name}`, reminder as never);
  }
  return shards;
}

const key = (r: LoadedReminder): string => `${r.identity}/${r.name}`;

describe('listLoaded', () => {
  it('pages through every loaded reminder in order, each page the first `limit` after the cursor', () => {
    const shards = shardsOf(5000, 7);
    const all = listLoaded(shards, 'k', 10_000, 0).reminders.map(key);
    expect(all).to.have.length(5000);
    expect([...all].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).to.not.equal(all);
    const seen: string[] = [];
    let after: { identity: string; name: string } | undefined;
    for (let pages = 0; pages < 200; pages++) {
      const page = listLoaded(shards, 'k', 37, 0, after);
      expect(page.total).to.equal(5000 - seen.length);
      if (page.reminders.length === 0) break;
      seen.push(...page.reminders.map(key));
      after = page.reminders.at(-1)!;
    }
    expect(seen).to.deep.equal(all);
    const byPair = listLoaded(shards, 'k', 10_000, 0).reminders;
    for (let i = 1; i < byPair.length; i++) {
      const [a, b] = [byPair[i - 1]!, byPair[i]!];
      expect(a.identity < b.identity || (a.identity === b.identity && a.name < b.name)).to.equal(
        true,
      );
    }
  });

  it('lists no more than `limit`, a limit of 1 and of 0 included', () => {
    const shards = shardsOf(300, 3);
    const first = listLoaded(shards, 'k', 300, 0).reminders[0]!;
    expect(listLoaded(shards, 'k', 1, 0).reminders).to.deep.equal([first]);
    expect(listLoaded(shards, 'k', 0, 0).reminders).to.deep.equal([]);
    expect(listLoaded(shards, 'k', 0, 0).total).to.equal(300);
  });
});

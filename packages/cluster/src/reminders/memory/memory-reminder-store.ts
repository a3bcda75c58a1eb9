import type { JobOutcome } from '../reminder';
import { ReminderFencedError } from '../errors';
import type {
  ClaimResult,
  ReminderSpec,
  ReminderStore,
  StoredReminder,
  TickClaim,
} from '../reminder-store';

interface Row {
  spec: ReminderSpec | undefined;
  gen: number;
  t0: number;
  last: number;
  /** The epoch that claimed `last` (0: none). */
  claimedBy: number;
}

interface ShardRows {
  epoch: number;
  rows: Map<string, Row>;
  outcomes: Map<string, JobOutcome>;
}

/** Key of a reminder inside its shard (the identity's length first: no separator ambiguity). */
function field(id: string, name: string): string {
  return `${id.length}:${id}${name}`;
}

/**
 * A ReminderStore in this process's memory, with the same fencing and claim semantics as the
 * Redis store: for tests and single-process clusters (reminders die with the process). Give
 * every member of an in-process cluster the same instance.
 */
export class MemoryReminderStore implements ReminderStore {
  private readonly shards = new Map<string, ShardRows>();

  private shard(kind: string, shard: number): ShardRows {
    const key = `${kind}/${shard}`;
    let s = this.shards.get(key);
    if (!s) this.shards.set(key, (s = { epoch: 0, rows: new Map(), outcomes: new Map() }));
    return s;
  }

  private fence(kind: string, shard: number, epoch: number): ShardRows {
    const s = this.shard(kind, shard);
    if (epoch < s.epoch) throw new ReminderFencedError(kind, shard, epoch, s.epoch);
    s.epoch = epoch;
    return s;
  }

  load(kind: string, shard: number, epoch: number): Promise<StoredReminder[]> {
    try {
      const s = this.fence(kind, shard, epoch);
      const out: StoredReminder[] = [];
      for (const [f, row] of s.rows) if (row.spec) out.push(this.stored(f, row));
      return Promise.resolve(out);
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  async loadMany(
    kind: string,
    shards: ReadonlyArray<{ shard: number; epoch: number }>,
  ): Promise<Array<StoredReminder[] | ReminderFencedError>> {
    return Promise.all(
      shards.map(({ shard, epoch }) =>
        this.load(kind, shard, epoch).catch((err: unknown) => {
          if (err instanceof ReminderFencedError) return err;
          throw err;
        }),
      ),
    );
  }

  put(
    kind: string,
    shard: number,
    id: string,
    name: string,
    spec: ReminderSpec,
  ): Promise<StoredReminder> {
    const s = this.shard(kind, shard);
    const f = field(id, name);
    const row = s.rows.get(f) ?? { spec: undefined, gen: 0, t0: 0, last: -1, claimedBy: 0 };
    row.gen = row.spec ? row.gen + 1 : 1;
    row.spec = spec;
    row.t0 = row.last + 1;
    s.rows.set(f, row);
    s.outcomes.delete(f);
    return Promise.resolve({ id, name, spec, gen: row.gen, t0: row.t0, last: row.last });
  }

  get(kind: string, shard: number, id: string, name: string) {
    const f = field(id, name);
    const row = this.shard(kind, shard).rows.get(f);
    return Promise.resolve(row?.spec ? this.stored(f, row) : undefined);
  }

  remove(kind: string, shard: number, id: string, name: string): Promise<boolean> {
    const s = this.shard(kind, shard);
    const f = field(id, name);
    const had = s.rows.get(f)?.spec !== undefined || s.outcomes.has(f);
    s.rows.delete(f);
    s.outcomes.delete(f);
    return Promise.resolve(had);
  }

  list(kind: string, shard: number, id: string): Promise<StoredReminder[]> {
    const prefix = `${id.length}:${id}`;
    const out: StoredReminder[] = [];
    for (const [f, row] of this.shard(kind, shard).rows) {
      if (f.startsWith(prefix) && row.spec) out.push(this.stored(f, row));
    }
    return Promise.resolve(out);
  }

  claim(
    kind: string,
    shard: number,
    epoch: number,
    claims: readonly TickClaim[],
  ): Promise<ClaimResult[]> {
    try {
      const s = this.fence(kind, shard, epoch);
      return Promise.resolve(
        claims.map((c): ClaimResult => {
          const row = s.rows.get(field(c.id, c.name));
          if (!row?.spec) return 'gone';
          if (row.gen !== c.gen) return 'stale';
          // The same tick again under the same epoch: the owner repeating a claim whose reply it lost.
          if (row.last > c.tick || (row.last === c.tick && row.claimedBy !== epoch)) return 'taken';
          row.last = c.tick;
          row.claimedBy = epoch;
          return 'ok';
        }),
      );
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  finish(
    kind: string,
    shard: number,
    epoch: number,
    id: string,
    name: string,
    gen: number,
    outcome: JobOutcome,
  ): Promise<boolean> {
    try {
      const s = this.fence(kind, shard, epoch);
      const f = field(id, name);
      const row = s.rows.get(f);
      if (!row?.spec || row.gen !== gen) return Promise.resolve(false);
      s.rows.delete(f);
      s.outcomes.set(f, outcome);
      return Promise.resolve(true);
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  outcome(kind: string, shard: number, id: string, name: string) {
    return Promise.resolve(this.shard(kind, shard).outcomes.get(field(id, name)));
  }

  /** This process's wall clock: every member sharing the store shares it. */
  time(): Promise<number> {
    return Promise.resolve(Date.now());
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  private stored(f: string, row: Row): StoredReminder {
    const colon = f.indexOf(':');
    const len = Number(f.slice(0, colon));
    const id = f.slice(colon + 1, colon + 1 + len);
    const name = f.slice(colon + 1 + len);
    return { id, name, spec: row.spec!, gen: row.gen, t0: row.t0, last: row.last };
  }
}

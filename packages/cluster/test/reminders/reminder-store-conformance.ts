import { expect } from 'chai';
import { ReminderFencedError } from '../../src/reminders/errors';
import type { ReminderSpec, ReminderStore } from '../../src/reminders/reminder-store';

/** A periodic schedule as reminders.set stores one. */
export const SPEC: ReminderSpec = {
  dueAt: 1000,
  periodMs: 100,
  catchUp: 'all',
  maxAttempts: 3,
  backoffMs: 10,
};

/** What `promise` rejected with (fails when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

/** The ReminderStore contract, run against every implementation. */
export function describeReminderStoreConformance(make: () => Promise<ReminderStore>): void {
  let store: ReminderStore;
  let kind: string;
  let n = 0;

  beforeEach(async () => {
    store = await make();
    kind = `k-${process.pid}-${++n}`;
  });

  it('stores, lists per grain and loads per shard', async () => {
    await store.put(kind, 3, 'a', 'r1', SPEC);
    await store.put(kind, 3, 'a', 'r2', { ...SPEC, data: { x: 1 } });
    await store.put(kind, 3, 'ab', 'r1', SPEC); // an identity that extends another
    await store.put(kind, 4, 'b', 'r1', SPEC);
    const listed = await store.list(kind, 3, 'a');
    expect(listed.map((r) => r.name).sort()).to.deep.equal(['r1', 'r2']);
    expect(listed.find((r) => r.name === 'r2')!.spec.data).to.deep.equal({ x: 1 });
    const loaded = await store.load(kind, 3, 5);
    expect(loaded.map((r) => `${r.id}/${r.name}`).sort()).to.deep.equal(['a/r1', 'a/r2', 'ab/r1']);
    expect(loaded.every((r) => r.gen === 1 && r.t0 === 0 && r.last === -1)).to.equal(true);
  });

  it('loadMany: per shard, what load returns or the fence that refused it, fencing each', async () => {
    expect(store.loadMany, 'the store batches loads').to.be.a('function');
    await store.put(kind, 3, 'a', 'r1', SPEC);
    await store.put(kind, 5, 'b', 'r1', SPEC);
    await store.load(kind, 4, 20); // shard 4 already belongs to a newer owner
    const got = await store.loadMany!(kind, [
      { shard: 3, epoch: 9 },
      { shard: 4, epoch: 9 },
      { shard: 5, epoch: 9 },
      { shard: 6, epoch: 9 },
    ]);
    expect(
      got.map((r) => (r instanceof Error ? 'fenced' : r.map((x) => x.id))),
      'per shard',
    ).to.deep.equal([['a'], 'fenced', ['b'], []]);
    expect((got[1] as ReminderFencedError).storedEpoch, 'the newer epoch').to.equal(20);
    // Each loaded shard is fenced at its epoch: an older owner's load is refused.
    expect(
      ReminderFencedError.is(await rejection(store.load(kind, 5, 8))),
      'shard 5 fenced',
    ).to.equal(true);
  });

  it('claims each tick once: compare-and-set on the last tick', async () => {
    const r = await store.put(kind, 1, 'g', 'r', SPEC);
    const claim = (tick: number) => ({ id: 'g', name: 'r', gen: r.gen, tick });
    expect(await store.claim(kind, 1, 7, [claim(0), claim(1)])).to.deep.equal(['ok', 'ok']);
    expect(await store.claim(kind, 1, 7, [claim(0), claim(5)])).to.deep.equal(['taken', 'ok']);
    expect((await store.get(kind, 1, 'g', 'r'))!.last).to.equal(5);
    // A newer owner may not take the tick the older one claimed, only the ticks after it.
    expect(await store.claim(kind, 1, 8, [claim(5), claim(6)])).to.deep.equal(['taken', 'ok']);
  });

  it('answers ok again when the owner repeats its claim of the last tick (its reply was lost)', async () => {
    const r = await store.put(kind, 1, 'g', 'r', SPEC);
    const claim = (tick: number) => ({ id: 'g', name: 'r', gen: r.gen, tick });
    expect(await store.claim(kind, 1, 7, [claim(3)])).to.deep.equal(['ok']);
    // The same owner (epoch 7) did not see the reply and claims tick 3 again: it delivers it.
    expect(await store.claim(kind, 1, 7, [claim(3)])).to.deep.equal(['ok']);
    // A replaced schedule keeps counting from the claimed tick.
    const replaced = await store.put(kind, 1, 'g', 'r', { ...SPEC, data: { v: 2 } });
    expect(replaced.last).to.equal(3);
    expect((await store.get(kind, 1, 'g', 'r'))!.last).to.equal(3);
  });

  it('fences: a claim, load or finish with an older epoch than seen is refused', async () => {
    const r = await store.put(kind, 2, 'g', 'r', SPEC);
    await store.load(kind, 2, 10); // the new owner loads at epoch 10
    const err = await rejection(
      store.claim(kind, 2, 9, [{ id: 'g', name: 'r', gen: r.gen, tick: 0 }]),
    );
    expect(ReminderFencedError.is(err)).to.equal(true);
    expect((err as ReminderFencedError).storedEpoch).to.equal(10);
    expect(ReminderFencedError.is(await rejection(store.load(kind, 2, 3)))).to.equal(true);
    const done = { status: 'done' as const, attempts: 1, at: 5 };
    const fin = await rejection(store.finish(kind, 2, 9, 'g', 'r', r.gen, done));
    expect(ReminderFencedError.is(fin)).to.equal(true);
    // Nothing was claimed by the fenced owner; the new one claims tick 0.
    expect(
      await store.claim(kind, 2, 10, [{ id: 'g', name: 'r', gen: r.gen, tick: 0 }]),
    ).to.deep.equal(['ok']);
    // Epochs up to 2^53 round-trip exactly (etcd revisions).
    const big = 2 ** 52 + 1;
    await store.load(kind, 2, big);
    expect(ReminderFencedError.is(await rejection(store.load(kind, 2, big - 1)))).to.equal(true);
  });

  it('a replaced schedule goes on counting from the last tick; old claims are stale', async () => {
    const r1 = await store.put(kind, 1, 'g', 'r', SPEC);
    await store.claim(kind, 1, 1, [{ id: 'g', name: 'r', gen: r1.gen, tick: 3 }]);
    const r2 = await store.put(kind, 1, 'g', 'r', { ...SPEC, periodMs: 500 });
    expect({ gen: r2.gen, t0: r2.t0, last: r2.last }).to.deep.equal({ gen: 2, t0: 4, last: 3 });
    expect(
      await store.claim(kind, 1, 1, [
        { id: 'g', name: 'r', gen: r1.gen, tick: 4 },
        { id: 'g', name: 'r', gen: r2.gen, tick: 4 },
      ]),
    ).to.deep.equal(['stale', 'ok']);
  });

  it('deletes: a deleted reminder is gone for claims', async () => {
    const r = await store.put(kind, 1, 'g', 'r', SPEC);
    expect(await store.remove(kind, 1, 'g', 'r')).to.equal(true);
    expect(await store.remove(kind, 1, 'g', 'r')).to.equal(false);
    expect(await store.get(kind, 1, 'g', 'r')).to.equal(undefined);
    expect(
      await store.claim(kind, 1, 1, [{ id: 'g', name: 'r', gen: r.gen, tick: 0 }]),
    ).to.deep.equal(['gone']);
  });

  it("records a job's outcome and removes the job, unless it was replaced", async () => {
    const job = { ...SPEC, periodMs: 0 };
    const r = await store.put(kind, 1, 'g', 'j', job);
    const outcome = { status: 'failed' as const, attempts: 3, at: 9, error: 'boom' };
    expect(await store.finish(kind, 1, 1, 'g', 'j', r.gen + 1, outcome)).to.equal(false);
    expect(await store.finish(kind, 1, 1, 'g', 'j', r.gen, outcome)).to.equal(true);
    expect(await store.get(kind, 1, 'g', 'j')).to.equal(undefined);
    expect(await store.outcome(kind, 1, 'g', 'j')).to.deep.equal(outcome);
    await store.put(kind, 1, 'g', 'j', job); // set again: the old outcome goes
    expect(await store.outcome(kind, 1, 'g', 'j')).to.equal(undefined);
  });
}

import { expect } from 'chai';
import { InvalidArgumentError } from '@granary/core';
import { ClusterError } from '../../src/errors';
import {
  InconsistentStateError,
  StateLostError,
  type StateConflictReason,
} from '../../src/state/errors';
import type { StateStore } from '../../src/state/state-store';

/** Two handles on ONE backing store (for Redis: two connections), made fresh per test. */
export interface StoreFixture {
  store: StateStore;
  other: StateStore;
  /**
   * The store detects lost state (RedisStateStore): a write expecting a version the store does
   * not hold is StateLostError (versions only grow, so the store went back), not a conflict.
   */
  detectsLoss?: boolean;
}

const bytes = (...values: number[]): Uint8Array => Uint8Array.from(values);

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

async function conflict(
  promise: Promise<unknown>,
  reason: StateConflictReason,
  expected: number | null,
  actual: number | null,
): Promise<InconsistentStateError> {
  const err = await rejection(promise);
  expect(err).to.be.instanceOf(InconsistentStateError);
  const e = err as InconsistentStateError;
  expect({ reason: e.reason, expected: e.expected, actual: e.actual }).to.deep.equal({
    reason,
    expected,
    actual,
  });
  expect(e.code).to.equal('ERR_INCONSISTENT_STATE');
  expect(e.name).to.equal('InconsistentStateError');
  expect(e).to.be.instanceOf(ClusterError);
  return e;
}

/**
 * The StateStore contract, run against every implementation: same inputs, same outcomes.
 * `kind` is unique per test so tests never see each other's state.
 */
export function describeStateStoreConformance(make: () => Promise<StoreFixture>): void {
  let store: StateStore;
  let other: StateStore;
  let detectsLoss: boolean | undefined;
  let kind: string;
  let counter = 0;

  beforeEach(async () => {
    ({ store, other, detectsLoss } = await make());
    kind = `kind-${process.pid}-${++counter}`;
  });

  describe('read', () => {
    it('returns null for a grain never written', async () => {
      expect(await store.read(kind, 'nobody')).to.equal(null);
    });

    it('returns the bytes and version of the last write, all 256 byte values intact', async () => {
      const all = Uint8Array.from({ length: 256 }, (_, i) => i);
      const version = await store.write(kind, 'a', all, { expectedVersion: null, epoch: 1 });
      const record = await other.read(kind, 'a');
      expect(record?.version).to.equal(version);
      expect(Array.from(record!.state)).to.deep.equal(Array.from(all));
    });

    it('keeps kinds and ids apart even when they contain slashes', async () => {
      await store.write(`${kind}/x`, 'y', bytes(1), { expectedVersion: null, epoch: 1 });
      await store.write(kind, 'x/y', bytes(2), { expectedVersion: null, epoch: 1 });
      expect(Array.from((await store.read(`${kind}/x`, 'y'))!.state)).to.deep.equal([1]);
      expect(Array.from((await store.read(kind, 'x/y'))!.state)).to.deep.equal([2]);
    });
  });

  describe('write', () => {
    it('starts at version 1 and adds one per write', async () => {
      expect(await store.write(kind, 'a', bytes(1), { expectedVersion: null, epoch: 1 })).to.equal(
        1,
      );
      expect(await store.write(kind, 'a', bytes(2), { expectedVersion: 1, epoch: 1 })).to.equal(2);
      expect(await other.write(kind, 'a', bytes(3), { expectedVersion: 2, epoch: 1 })).to.equal(3);
      expect((await store.read(kind, 'a'))!.version).to.equal(3);
    });

    it('rejects a stale expected version and keeps the stored state', async () => {
      await store.write(kind, 'a', bytes(1), { expectedVersion: null, epoch: 1 });
      await store.write(kind, 'a', bytes(2), { expectedVersion: 1, epoch: 1 });
      const e = await conflict(
        other.write(kind, 'a', bytes(9), { expectedVersion: 1, epoch: 1 }),
        'version',
        1,
        2,
      );
      expect(e.message).to.contain(`${kind}/a`).and.to.contain('expected version 1');
      const record = await store.read(kind, 'a');
      expect({ v: record!.version, s: Array.from(record!.state) }).to.deep.equal({ v: 2, s: [2] });
    });

    it('rejects expecting nothing when state exists, and expecting a version when none does', async () => {
      const ahead = store.write(kind, 'b', bytes(1), { expectedVersion: 4, epoch: 1 });
      if (detectsLoss) {
        const err = await rejection(ahead);
        expect(err).to.be.instanceOf(StateLostError);
        const lost = err as StateLostError;
        expect([lost.seenVersion, lost.foundVersion, lost.evidence]).to.deep.equal([
          4,
          null,
          'version',
        ]);
      } else {
        await conflict(ahead, 'version', 4, null);
      }
      await store.write(kind, 'a', bytes(1), { expectedVersion: null, epoch: 1 });
      await conflict(
        store.write(kind, 'a', bytes(2), { expectedVersion: null, epoch: 1 }),
        'version',
        null,
        1,
      );
      if (detectsLoss) {
        // The loss is marked: the grain stays refused (never read as empty) until accepted.
        const err = await rejection(store.read(kind, 'b'));
        expect((err as StateLostError).evidence).to.equal('marked');
      } else {
        expect(await store.read(kind, 'b')).to.equal(null);
      }
    });

    it('rejects an epoch older than the stored one, never overwriting', async () => {
      await store.write(kind, 'a', bytes(1), { expectedVersion: null, epoch: 10 });
      const e = await conflict(
        other.write(kind, 'a', bytes(9), { expectedVersion: 1, epoch: 9 }),
        'epoch',
        9,
        10,
      );
      expect(e.message).to.contain(`${kind}/a`).and.to.contain('epoch 9');
      const record = await store.read(kind, 'a');
      expect({ v: record!.version, s: Array.from(record!.state) }).to.deep.equal({ v: 1, s: [1] });
    });

    it('accepts the same or a newer epoch, and a newer one fences the older from then on', async () => {
      await store.write(kind, 'a', bytes(1), { expectedVersion: null, epoch: 10 });
      await store.write(kind, 'a', bytes(2), { expectedVersion: 1, epoch: 10 });
      await other.write(kind, 'a', bytes(3), { expectedVersion: 2, epoch: 11 });
      await conflict(
        store.write(kind, 'a', bytes(4), { expectedVersion: 3, epoch: 10 }),
        'epoch',
        10,
        11,
      );
    });

    it('reports the epoch when both epoch and version are wrong', async () => {
      await store.write(kind, 'a', bytes(1), { expectedVersion: null, epoch: 5 });
      await conflict(
        store.write(kind, 'a', bytes(2), { expectedVersion: 7, epoch: 4 }),
        'epoch',
        4,
        5,
      );
    });

    it('lets exactly one of many concurrent writers with the same expected version win', async () => {
      await store.write(kind, 'a', bytes(0), { expectedVersion: null, epoch: 1 });
      const attempts = Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? other : store).write(kind, 'a', bytes(i + 1), { expectedVersion: 1, epoch: 1 }),
      );
      const results = await Promise.allSettled(attempts);
      const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
      expect(won).to.have.length(1);
      for (const r of results) {
        if (r.status === 'rejected') expect(r.reason).to.be.instanceOf(InconsistentStateError);
      }
      const record = await store.read(kind, 'a');
      expect({ v: record!.version, s: Array.from(record!.state) }).to.deep.equal({
        v: 2,
        s: [won[0]! + 1],
      });
    });

    it('rejects bad arguments with InvalidArgumentError and stores nothing', async () => {
      const bad: Array<() => Promise<unknown>> = [
        () => store.write(kind, 'a', bytes(1), { expectedVersion: null, epoch: -1 }),
        () => store.write(kind, 'a', bytes(1), { expectedVersion: 1.5, epoch: 1 }),
        () =>
          store.write(kind, 'a', 'text' as unknown as Uint8Array, {
            expectedVersion: null,
            epoch: 1,
          }),
        () => store.write('', 'a', bytes(1), { expectedVersion: null, epoch: 1 }),
        () => store.write(kind, '', bytes(1), { expectedVersion: null, epoch: 1 }),
        () => store.clear(kind, 'a', { expectedVersion: null, epoch: Number.NaN }),
      ];
      for (const call of bad) {
        const err = await rejection(call());
        expect(err).to.be.instanceOf(InvalidArgumentError);
        expect((err as InvalidArgumentError).code).to.equal('ERR_INVALID_ARGUMENT');
      }
      expect(await store.read(kind, 'a')).to.equal(null);
    });
  });

  describe('clear', () => {
    it('removes the state so read returns null and a write expecting nothing recreates it', async () => {
      await store.write(kind, 'a', bytes(1), { expectedVersion: null, epoch: 1 });
      await store.clear(kind, 'a', { expectedVersion: 1, epoch: 1 });
      expect(await other.read(kind, 'a')).to.equal(null);
      const version = await store.write(kind, 'a', bytes(2), { expectedVersion: null, epoch: 1 });
      expect(version).to.be.greaterThan(1);
      expect((await store.read(kind, 'a'))!.version).to.equal(version);
    });

    it('rejects a writer that still holds the version from before the clear', async () => {
      await store.write(kind, 'a', bytes(1), { expectedVersion: null, epoch: 1 });
      await other.clear(kind, 'a', { expectedVersion: 1, epoch: 1 });
      await conflict(
        store.write(kind, 'a', bytes(2), { expectedVersion: 1, epoch: 1 }),
        'version',
        1,
        null,
      );
    });

    it('rejects a stale version or an older epoch and keeps the state', async () => {
      await store.write(kind, 'a', bytes(1), { expectedVersion: null, epoch: 3 });
      await store.write(kind, 'a', bytes(2), { expectedVersion: 1, epoch: 3 });
      await conflict(store.clear(kind, 'a', { expectedVersion: 1, epoch: 3 }), 'version', 1, 2);
      await conflict(store.clear(kind, 'a', { expectedVersion: 2, epoch: 2 }), 'epoch', 2, 3);
      expect((await store.read(kind, 'a'))!.version).to.equal(2);
    });

    it('keeps fencing after the state is gone: an older epoch cannot recreate it', async () => {
      await store.write(kind, 'a', bytes(1), { expectedVersion: null, epoch: 5 });
      await other.clear(kind, 'a', { expectedVersion: 1, epoch: 6 });
      await conflict(
        store.write(kind, 'a', bytes(9), { expectedVersion: null, epoch: 5 }),
        'epoch',
        5,
        6,
      );
      expect(await store.read(kind, 'a')).to.equal(null);
    });
  });
}

import { performance } from 'node:perf_hooks';
import type { IKeyValue, ITxnRequest, ITxnResponse } from 'etcd3';
import { LeaseLostError } from '../../errors';
import type { ClaimResult } from '../cluster-provider';
import { claimHolder } from './etcd-keys';
import { encodeNote, type ReleasedItem } from './etcd-notes';
import { TxnWindow } from './etcd-txn-window';

/**
 * Claims (or releases) per etcd transaction. One request costs etcd ~1 ms of CPU on a small
 * machine while a transaction of 64 puts costs a few ms, so a rebalance of 256 shards goes from
 * a quarter second to a handful of ms. etcd refuses more than 128 operations per transaction
 * (--max-txn-ops); 64 leaves room.
 */
const MAX_BATCH = 64;
/** First pause before reading back keys whose write had an unknown outcome (etcd unreachable). */
const READ_BACK_BACKOFF_INITIAL_MS = 100;
/** Cap of that pause: a key is read back within this long of etcd answering again. */
const READ_BACK_BACKOFF_MAX_MS = 1000;

/** The etcd calls the batcher makes: the provider's KV client, or a test's fault-injecting one. */
export interface EtcdTxnCalls {
  txn(req: ITxnRequest, options?: { deadline?: number }): Promise<ITxnResponse>;
}

interface Pending<T> {
  key: Buffer;
  resolve(value: T): void;
  reject(err: unknown): void;
}

interface ClaimRequest extends Pending<ClaimResult> {
  value: Buffer;
  lease: string;
  wanted: (() => boolean) | undefined;
}

interface ReleaseRequest extends Pending<void> {
  /** The claim's epoch (create revision): the key is deleted only if it still carries it. */
  epoch: number;
  /** A stray claim's lease: instead of the epoch, the key is deleted only if still on it. */
  lease?: string | undefined;
  /** Hand-off: the member told of this release, and what it is told. */
  note?: { to: string; item: ReleasedItem } | undefined;
}

/** Where hand-off notes go: a note key per receiver, on the sender's current lease. */
export interface NoteTarget {
  key(to: string): Buffer;
  /** The sender's current lease, or undefined (then no note is written). */
  lease(): string | undefined;
}

/**
 * Coalesces the claims and releases issued in the same tick into few etcd transactions, with
 * the semantics of one transaction per shard: a claim creates the key only if absent (else it
 * learns the holder), a release deletes only if the create revision is the epoch. When a batch's
 * comparison fails, the keys that could still succeed go into the next batch.
 *
 * No outcome is left unknown. A transaction that fails without a definite answer (deadline,
 * connection lost: etcd may have applied it) is resolved by reading its keys back, retried until
 * etcd answers: a key on the claimant's lease is its claim (granted), a key on another lease is
 * held by that member, an absent key is claimed again; a release whose key still carries its
 * epoch is sent again, otherwise it is done. Because an absent key is always claimed again until
 * a definite answer, a late apply of the lost transaction cannot leave a claim nobody knows of
 * (its compare needs the key absent). Claims stop only when their lease is no longer current
 * (LeaseLostError): the provider revokes that lease, and its keys with it.
 */
export class EtcdClaimBatcher {
  private readonly claims = new Fifo<ClaimRequest>();
  private readonly releases = new Fifo<ReleaseRequest>();
  private scheduled = false;
  private inFlight = 0;
  /**
   * Transactions in flight at once (TxnWindow): the rest wait here, not in etcd. A member alone at
   * the start of a join storm is the desired owner of 65,536 ranges (4 kinds): ~1,000
   * transactions, which all sent at once would queue tens of thousands of writes in etcd.
   */
  private readonly window = new TxnWindow();

  constructor(
    private readonly kv: () => EtcdTxnCalls,
    private readonly timeoutMs: number,
    /** True while `lease` is this member's registration (claims on an older one are dropped). */
    private readonly leaseCurrent: (lease: string) => boolean,
    private readonly notes?: NoteTarget,
    /** Told of each foreign claim key (on no lease) before it is deleted. */
    private readonly foreignClaim?: (key: Buffer) => void,
  ) {}

  /**
   * Creates `key` on `lease` if absent. `wanted` is asked when the claim's batch is sent: a claim
   * queued behind others (the window) that its member no longer wants answers `abandoned`.
   */
  claim(key: Buffer, value: Buffer, lease: string, wanted?: () => boolean): Promise<ClaimResult> {
    return new Promise((resolve, reject) => {
      this.claims.push({ key, value, lease, wanted, resolve, reject });
      this.schedule();
    });
  }

  /**
   * Deletes `key` if its create revision is `epoch`; with `note`, the same transaction writes a
   * hand-off note to `note.to` (one note per receiver per transaction, listing its releases).
   */
  release(key: Buffer, epoch: number, note?: ReleaseRequest['note']): Promise<void> {
    return new Promise((resolve, reject) => {
      this.releases.push({ key, epoch, note, resolve, reject });
      this.schedule();
    });
  }

  /**
   * Deletes `key` if it is still on `lease`: a claim the audit found under this member's lease
   * that the member does not know the epoch of (it fenced, then proved the same lease alive).
   * Batched and windowed like every release: after a fence on a lone or large member the audit
   * finds thousands at once, and one transaction each overran etcd (DEADLINE_EXCEEDED on most,
   * their ranges held until the next audit, ~10 s later, while their new owner waited).
   */
  releaseStray(key: Buffer, lease: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.releases.push({ key, epoch: 0, lease, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  /**
   * Sends batches while the window allows: releases first (each hands a range to a member
   * waiting for it), then claims, oldest first.
   */
  private pump(): void {
    while (this.inFlight < this.window.size) {
      if (this.releases.length > 0) {
        this.send(this.releaseBatch(this.releases.take(MAX_BATCH)));
      } else if (this.claims.length > 0) {
        this.send(this.claimBatch(this.claims.take(MAX_BATCH)));
      } else return;
    }
  }

  private send(batch: Promise<void>): void {
    this.inFlight++;
    const sentAt = performance.now();
    void batch.finally(() => {
      this.inFlight--;
      this.window.answered(performance.now() - sentAt);
      this.pump();
    });
  }

  private async claimBatch(batch: ClaimRequest[]): Promise<void> {
    const live = this.dropStale(batch);
    if (live.length === 0) return;
    let res: ITxnResponse;
    try {
      res = await this.kv().txn(
        {
          compare: live.map((r) => ({
            key: r.key,
            target: 'Create',
            result: 'Equal',
            create_revision: 0,
          })),
          success: live.map((r) => ({
            request_put: { key: r.key, value: r.value, lease: r.lease },
          })),
          failure: live.map((r) => ({ request_range: { key: r.key } })),
        },
        { deadline: Date.now() + this.timeoutMs },
      );
    } catch (err) {
      if (isDefinite(err)) {
        for (const r of live) r.reject(err);
        return;
      }
      const read = await this.readBack(live, (b) => this.dropStale(b));
      read.batch.forEach((r, i) => this.settleClaim(r, read.kvs[i], () => this.claims.push(r)));
      if (this.claims.length > 0) this.schedule();
      return;
    }
    if (res.succeeded) {
      const epoch = Number(res.header.revision);
      for (const r of live) r.resolve({ epoch });
      return;
    }
    live.forEach((r, i) =>
      this.settleClaim(r, res.responses[i]?.response_range?.kvs[0], () => this.claims.push(r)),
    );
    if (this.claims.length > 0) this.schedule();
  }

  /** What a key read after a claim attempt says: granted, held by another, or absent (retry). */
  private settleClaim(r: ClaimRequest, kv: IKeyValue | undefined, retry: () => void): void {
    if (!kv) retry();
    else if (String(kv.lease) === r.lease) r.resolve({ epoch: Number(kv.create_revision) });
    else if (String(kv.lease) === '0') this.removeForeign(r, kv, retry);
    else r.resolve({ heldBy: claimHolder(kv), holderEpoch: Number(kv.create_revision) });
  }

  /**
   * A claim key on no lease is no member's: claims are written on their holder's lease and go
   * with it, so one written by hand or by another program held its range, unserved, forever
   * (the desired owner waited on a holder that never lets go). Deleted if unchanged (still on
   * no lease, same revision), then claimed again.
   */
  private removeForeign(r: ClaimRequest, kv: IKeyValue, retry: () => void): void {
    this.foreignClaim?.(kv.key);
    this.kv()
      .txn(
        {
          compare: [
            { key: kv.key, target: 'Mod', result: 'Equal', mod_revision: kv.mod_revision },
            { key: kv.key, target: 'Lease', result: 'Equal', lease: '0' },
          ],
          success: [{ request_delete_range: { key: kv.key } }],
        },
        { deadline: Date.now() + this.timeoutMs },
      )
      .then(
        () => {
          retry();
          this.schedule();
        },
        (err: unknown) => r.reject(err),
      );
  }

  private async releaseBatch(batch: ReleaseRequest[]): Promise<void> {
    let res: ITxnResponse;
    try {
      res = await this.kv().txn(
        {
          compare: batch.map((r) =>
            r.lease !== undefined
              ? { key: r.key, target: 'Lease' as const, result: 'Equal' as const, lease: r.lease }
              : {
                  key: r.key,
                  target: 'Create' as const,
                  result: 'Equal' as const,
                  create_revision: r.epoch,
                },
          ),
          success: [
            ...batch.map((r) => ({ request_delete_range: { key: r.key } })),
            ...this.notePuts(batch),
          ],
          failure: batch.map((r) => ({ request_range: { key: r.key } })),
        },
        { deadline: Date.now() + this.timeoutMs },
      );
    } catch (err) {
      if (isDefinite(err)) {
        for (const r of batch) r.reject(err);
        return;
      }
      const read = await this.readBack(batch, (b) => b);
      read.batch.forEach((r, i) => this.settleRelease(r, read.kvs[i]));
      if (this.releases.length > 0) this.schedule();
      return;
    }
    if (res.succeeded) {
      for (const r of batch) r.resolve();
      return;
    }
    batch.forEach((r, i) => this.settleRelease(r, res.responses[i]?.response_range?.kvs[0]));
    if (this.releases.length > 0) this.schedule();
  }

  /** One note put per receiver of the batch's hand-offs (at most MAX_BATCH: within max-txn-ops). */
  private notePuts(
    batch: ReleaseRequest[],
  ): Array<{ request_put: { key: Buffer; value: Buffer; lease: string } }> {
    const lease = this.notes?.lease();
    if (!this.notes || !lease) return [];
    const byTarget = new Map<string, ReleasedItem[]>();
    for (const r of batch) {
      if (!r.note) continue;
      const items = byTarget.get(r.note.to) ?? [];
      items.push(r.note.item);
      byTarget.set(r.note.to, items);
    }
    return [...byTarget].map(([to, released]) => ({
      request_put: { key: this.notes!.key(to), value: encodeNote({ released }), lease },
    }));
  }

  /**
   * A key that still carries the release's epoch (a stray's: is still on its lease) is deleted
   * again; otherwise the release is done.
   */
  private settleRelease(r: ReleaseRequest, kv: IKeyValue | undefined): void {
    const still =
      kv !== undefined &&
      (r.lease !== undefined
        ? String(kv.lease) === r.lease
        : Number(kv.create_revision) === r.epoch);
    if (still) this.releases.push(r);
    else r.resolve();
  }

  /**
   * Reads the keys of a batch whose outcome is unknown, retrying with backoff until etcd answers.
   * Before each retry `prune` drops (and rejects) the requests that no longer matter; the result
   * lines up with the batch that was finally read.
   */
  private async readBack<T extends Pending<unknown>>(
    batch: T[],
    prune: (batch: T[]) => T[],
  ): Promise<{ batch: T[]; kvs: Array<IKeyValue | undefined> }> {
    let delay = READ_BACK_BACKOFF_INITIAL_MS;
    for (;;) {
      try {
        const res = await this.kv().txn(
          { compare: [], success: batch.map((r) => ({ request_range: { key: r.key } })) },
          { deadline: Date.now() + this.timeoutMs },
        );
        return { batch, kvs: batch.map((_, i) => res.responses[i]?.response_range?.kvs[0]) };
      } catch (err) {
        if (isDefinite(err)) {
          for (const r of batch) r.reject(err);
          return { batch: [], kvs: [] };
        }
      }
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, READ_BACK_BACKOFF_MAX_MS);
      batch = prune(batch);
      if (batch.length === 0) return { batch, kvs: [] };
    }
  }

  /**
   * Rejects (LeaseLostError) the claims whose lease is no longer current, answers `abandoned` to
   * those no longer wanted; returns the others.
   */
  private dropStale(batch: ClaimRequest[]): ClaimRequest[] {
    const live: ClaimRequest[] = [];
    for (const r of batch) {
      if (!this.leaseCurrent(r.lease)) r.reject(new LeaseLostError('claim'));
      else if (r.wanted && !r.wanted()) r.resolve({ abandoned: true });
      else live.push(r);
    }
    return live;
  }
}

/** A FIFO whose take(n) costs O(n), however long the queue (65,536 claims at a storm's start). */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  take(n: number): T[] {
    const out = this.items.slice(this.head, this.head + n);
    this.head += out.length;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 4096 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return out;
  }
}

/**
 * True for errors etcd returns after deciding not to apply the request (a missing lease, a bad
 * request): anything else (deadline, unavailable, cancelled, connection reset) may have been
 * applied, so its outcome is unknown.
 */
function isDefinite(err: unknown): boolean {
  const name = (err as Error)?.name ?? '';
  return (
    name === 'EtcdLeaseInvalidError' ||
    name === 'GRPCInvalidArgumentError' ||
    name === 'EtcdPermissionDeniedError' ||
    name === 'ClientClosedError' ||
    name === 'NotJoinedError' ||
    /lease not found/.test(String(err))
  );
}

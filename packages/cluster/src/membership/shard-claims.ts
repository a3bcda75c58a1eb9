import type { Span } from '@opentelemetry/api';
import { LeaseLostError } from '../errors';
import type { ClusterLogger } from '../internal/logger';
import type { KindShards } from '../placement/kind-ranges';
import { placementOf } from '../placement/owner-of';
import type { ClaimResult, ClusterProvider } from '../providers/cluster-provider';
import { ATTR_OUTCOME, ATTR_REASON, ATTR_SHARD_EPOCH } from '../telemetry/attributes';
import { endSpan, type ClusterTelemetry } from '../telemetry/telemetry';
import type { ShardAcquired, ShardReleased, ShardReleaseReason } from './cluster-events';
import { claimSpan, SPAN_CLAIM, SPAN_RELEASE } from './claim-spans';
import { KindClaims } from './kind-claims';
import { claimRanges, releaseClaims } from './claim-calls';
import { runReleaseHooks, type BeforeReleaseHook } from './release-hooks';
import { EMPTY_TOPOLOGY, type Topology } from './topology';
import { WorkQueue } from './work-queue';

export type { BeforeReleaseHook } from './release-hooks';

/** A release decided on: the range, the epoch it is released at, why, and its span. */
interface Release {
  range: number;
  epoch: number;
  reason: ShardReleaseReason;
  span: Span | undefined;
}

/** Callbacks of ShardOwnership. */
export interface ShardOwnershipEvents {
  acquired(e: ShardAcquired): void;
  released(e: ShardReleased): void;
}

/** A kind this member hosts, as ShardOwnership needs it. */
export interface OwnedKind {
  name: string;
  shards: KindShards;
}

/**
 * Claims in flight at once (started, not answered); the reconcile queue waits above it. The
 * provider sends a few transactions of 64 claims at a time (etcd's TxnWindow: at most 4), so a
 * member starting alone with 2 kinds x 16,384 ranges held all 32,768 claims in memory at once (an
 * async call, a promise, keys and closures each) for its first second or two. V8 sizes its old
 * generation from what a full GC finds alive, and its first full GC fell in that window: it found
 * 44-54 MiB alive instead of 24, and the node (issue 26's overload benchmark) then piled up to
 * ~190 MiB of heap before its next full GC instead of ~90 (RSS +75-110 MiB over idle instead of
 * +35). 1,024 keeps the provider fed (4 x 64 claims in flight, 3 windows waiting).
 */
export const MAX_CLAIMS_IN_FLIGHT = 1024;

/**
 * The claims of one member per kind and claim range, and the operations that change them in the
 * store: a range this member should hold and does not is claimed, one it holds and should not
 * is released after the drain hooks, one another member holds is waited for. ShardOwnership
 * (shard-ownership.ts) decides when: placement passes, lease loss, the retry tick, the audit.
 */
export abstract class ShardClaims {
  protected readonly kinds = new Map<string, KindClaims>();
  protected readonly list: KindClaims[];
  protected readonly hooks = new Set<BeforeReleaseHook>();
  protected readonly inflight = new Set<Promise<void>>();
  /** Releases that failed in the store; retried so the claim does not linger until lease expiry. */
  protected readonly orphans = new Map<string, { kind: string; range: number; epoch: number }>();
  protected readonly queue: WorkQueue;
  /**
   * Ranges to let go of (held, no longer desired): never paused. A release hands a range to a
   * member that waits for it; behind this member's own claims (the queue pauses while
   * MAX_CLAIMS_IN_FLIGHT are unanswered) it waited for a whole claim window, which in a join
   * storm on a slow etcd is seconds per window, while the waiting members' retries add to
   * etcd's load.
   */
  protected readonly releases: WorkQueue;
  /** Claims started and not settled (the queue pauses at MAX_CLAIMS_IN_FLIGHT). */
  protected claiming = 0;
  /** A flush of the ranges reconcile decided on is scheduled (see flush). */
  private flushing = false;
  /** The newest topology (FencedMember); claims follow it once its placement pass has run. */
  topology: Topology = EMPTY_TOPOLOGY;
  /** Whether `topology` lists this member (see reconcile). */
  protected selfListed = false;
  /** True before start, while the lease is lost and after stop (FencedMember). */
  fenced = true;
  protected leaving = false;
  protected stopped = false;
  /** Bumped on lease loss: results of operations started under an older lease are dropped. */
  protected generation = 0;
  /**
   * Failed claims and releases, stray and vanished claims since the last retry tick, logged
   * once per tick: with thousands of ranges, one line per range would bury the log when the
   * store is unreachable or slow.
   */
  protected readonly tallies = new Map<string, { count: number; last: Record<string, unknown> }>();

  constructor(
    protected readonly provider: ClusterProvider,
    protected readonly selfId: string,
    kinds: ReadonlyArray<OwnedKind>,
    protected readonly events: ShardOwnershipEvents,
    protected readonly logger: ClusterLogger,
    /** Spans of claims and releases. */
    protected readonly telemetry: ClusterTelemetry,
  ) {
    this.list = kinds.map((k) => new KindClaims(k.name, k.shards));
    for (const k of this.list) this.kinds.set(k.name, k);
    this.queue = new WorkQueue(
      this.list.map((k) => k.ranges),
      (i, r) => this.reconcile(this.list[i], r),
      undefined,
      () => this.claiming >= MAX_CLAIMS_IN_FLIGHT,
    );
    this.releases = new WorkQueue(
      this.list.map((k) => k.ranges),
      (i, r) => this.reconcile(this.list[i], r),
    );
  }

  /** A queued claim is still worth sending: same lease generation, range still desired. */
  protected stillWanted(k: KindClaims, range: number, generation: number): boolean {
    return generation === this.generation && !this.stopped && this.desired(k, range);
  }

  protected desired(k: KindClaims, range: number): boolean {
    return !this.fenced && !this.leaving && k.desired[range] === 1;
  }

  protected reconcile(k: KindClaims, range: number): void {
    if (this.stopped) return;
    if (k.busy[range]) {
      k.again[range] = 1;
      return;
    }
    const mine = this.desired(k, range);
    const held = k.epochs[range] > 0;
    if (mine && !held) {
      k.busy[range] = 1;
      this.claiming++;
      k.toClaim.push(range);
      this.scheduleFlush();
    } else if (!mine && held) {
      // A topology without this member while its lease is valid is not current (e.g. read
      // before its own key): nobody else can take the range meanwhile, so keep it rather than
      // hand its grains off.
      if (!this.leaving && !this.selfListed) return;
      k.busy[range] = 1;
      k.toRelease.push(range, k.epochs[range], this.leaving ? 1 : 0);
      this.scheduleFlush();
    } else if (!mine) k.waiting.delete(range);
  }

  /**
   * Starts the claims and releases reconcile decided on since the last flush, one batch per
   * kind: a member alone starts with every range of every kind to claim (16,384 per kind by
   * default), and one operation, promise and provider call per range made start-up cost ~0.2 s
   * of CPU per kind with the memory provider and as much again at shutdown.
   */
  protected flush(): void {
    this.flushing = false;
    for (const k of this.list) {
      if (k.toClaim.length > 0) {
        const ranges = k.toClaim;
        k.toClaim = [];
        this.track(this.claimBatch(k, ranges, this.generation));
      }
      if (k.toRelease.length > 0) {
        const items = k.toRelease;
        k.toRelease = [];
        this.releaseBatch(k, items);
      }
    }
  }

  private scheduleFlush(): void {
    if (this.flushing) return;
    this.flushing = true;
    queueMicrotask(() => {
      if (this.flushing) this.flush();
    });
  }

  /** Claims `ranges` of `k` (each marked busy and counted in `claiming` by reconcile). */
  private claimBatch(k: KindClaims, ranges: number[], generation: number): Promise<void> {
    const spans = this.telemetry.tracing
      ? ranges.map((r) => claimSpan(this.telemetry, SPAN_CLAIM, k, r))
      : [];
    return claimRanges(
      this.provider,
      k.name,
      ranges,
      (range) => this.stillWanted(k, range, generation),
      (i, result) => this.claimAnswered(k, ranges[i], generation, result, spans[i]),
      (i, err) => this.claimFailed(k, ranges[i], generation, err, spans[i]),
    );
  }

  private claimAnswered(
    k: KindClaims,
    range: number,
    generation: number,
    result: ClaimResult,
    span: Span | undefined,
  ): void {
    try {
      if ('abandoned' in result) {
        // Not sent: the range stopped being this member's while the claim was queued. Settle
        // reconciles it once more (dropping a stale wait on it, or claiming if wanted again).
        span?.setAttribute(ATTR_OUTCOME, 'abandoned');
        k.again[range] = 1;
        return;
      }
      if ('epoch' in result) {
        k.stats.acquired++;
        span?.setAttributes({ [ATTR_OUTCOME]: 'acquired', [ATTR_SHARD_EPOCH]: result.epoch });
      } else {
        k.stats.conflicts++;
        span?.setAttribute(ATTR_OUTCOME, 'conflict');
      }
      if (generation !== this.generation || this.stopped) return;
      if ('epoch' in result) {
        k.waiting.delete(range);
        k.epochs[range] = result.epoch;
        k.forEachShard(range, (shard) =>
          this.events.acquired({ kind: k.name, shard, epoch: result.epoch }),
        );
      } else {
        const before = k.waiting.get(range);
        const same =
          before?.member === result.heldBy &&
          result.holderEpoch !== undefined &&
          before.epoch === result.holderEpoch;
        k.waiting.set(range, {
          member: result.heldBy,
          epoch: result.holderEpoch,
          seen: same ? before.seen + 1 : 1,
        });
      }
    } finally {
      span?.end();
      this.claimSettled(k, range);
    }
  }

  private claimFailed(
    k: KindClaims,
    range: number,
    generation: number,
    err: unknown,
    span: Span | undefined,
  ): void {
    k.stats.failed++;
    if (generation === this.generation && !(err instanceof LeaseLostError)) {
      this.tally('shard claims failed; retrying', { err, kind: k.name, range });
      if (!k.waiting.has(range)) k.waiting.set(range, { member: '', epoch: undefined, seen: 0 });
    }
    if (span !== undefined) endSpan(span, err);
    this.claimSettled(k, range);
  }

  private claimSettled(k: KindClaims, range: number): void {
    this.claiming--;
    this.settle(k, range);
    if (this.claiming < MAX_CLAIMS_IN_FLIGHT) this.queue.resume();
  }

  /**
   * Releases the ranges of `items` (range, epoch, 1 if shutdown) after the drain hooks of their
   * shards; the ranges whose hooks all returned at once go to the store together.
   */
  private releaseBatch(k: KindClaims, items: number[]): void {
    const hooks = [...this.hooks];
    const failed = (err: unknown, shard: number): void =>
      this.logger.error({ err, kind: k.name, shard }, 'before-release hook failed; releasing');
    const now: Release[] = [];
    for (let i = 0; i < items.length; i += 3) {
      const range = items[i];
      const epoch = items[i + 1];
      const reason: ShardReleaseReason = items[i + 2] === 1 ? 'shutdown' : 'rebalance';
      const span = claimSpan(this.telemetry, SPAN_RELEASE, k, range);
      span?.setAttributes({ [ATTR_REASON]: reason, [ATTR_SHARD_EPOCH]: epoch });
      const shards: number[] = [];
      k.forEachShard(range, (s) => shards.push(s));
      const release: Release = { range, epoch, reason, span };
      const drained = runReleaseHooks(k.name, hooks, shards, failed);
      if (drained === undefined) now.push(release);
      else this.track(drained.then(() => this.releaseRanges(k, [release])));
    }
    if (now.length > 0) this.track(this.releaseRanges(k, now));
  }

  /**
   * Drops each claim still held under the epoch it is released at (not lost meanwhile) and
   * releases those in the store; every range settles once the store answered.
   */
  private async releaseRanges(k: KindClaims, batch: Release[]): Promise<void> {
    const held = batch.filter((it) => {
      if (k.epochs[it.range] !== it.epoch) return false;
      this.drop(k, it.range, it.reason);
      return true;
    });
    try {
      if (held.length === 0) return;
      const requests = held.map((it) => ({
        shard: it.range,
        epoch: it.epoch,
        to: this.desiredOwner(k, it.range),
      }));
      await releaseClaims(this.provider, k.name, requests, (i, err) =>
        this.releasedInStore(k.name, held[i].range, held[i].epoch, err),
      );
    } finally {
      for (const it of batch) {
        it.span?.end();
        this.settle(k, it.range);
      }
    }
  }

  /** The range's desired owner under the current topology, if it is another member. */
  protected desiredOwner(k: KindClaims, range: number): string | undefined {
    const placement = placementOf(this.topology);
    const id = placement.owner(placement.kind(k.name), range)?.id;
    return id === this.selfId ? undefined : id;
  }

  /** Records a release's answer from the store: one that failed is retried on the retry tick. */
  protected releasedInStore(kind: string, range: number, epoch: number, err: unknown): void {
    if (err === undefined) {
      if (this.orphans.size > 0) this.orphans.delete(`${kind}/${range}`);
    } else {
      this.tally('shard releases failed; retrying', { err, kind, range, epoch });
      this.orphans.set(`${kind}/${range}`, { kind, range, epoch });
    }
  }

  /** Releases a claim the store holds for this member that it did not know of (k: our kind). */
  protected async releaseStrayOp(
    k: KindClaims | undefined,
    kind: string,
    range: number,
  ): Promise<void> {
    if (k) k.busy[range] = 1;
    try {
      await this.provider.releaseStray?.(kind, range);
      this.tally('claims this member did not know of released', { kind, range });
    } catch (err) {
      this.tally('stray claims not released; the next audit retries', { err, kind, range });
    } finally {
      if (k) this.settle(k, range);
    }
  }

  protected settle(k: KindClaims, range: number): void {
    k.busy[range] = 0;
    if (k.again[range]) {
      k.again[range] = 0;
      this.reconcile(k, range);
    }
  }

  protected drop(k: KindClaims, range: number, reason: ShardReleaseReason): void {
    const epoch = k.epochs[range];
    k.epochs[range] = 0;
    k.forEachShard(range, (shard) => this.events.released({ kind: k.name, shard, epoch, reason }));
  }

  /** Resolves once no claim or release is decided on or in flight (or `done()`). */
  protected async settled(done: () => boolean): Promise<void> {
    for (this.flush(); this.inflight.size > 0 && !done(); this.flush()) {
      await Promise.allSettled([...this.inflight]);
    }
  }

  protected track(op: Promise<void>): void {
    this.inflight.add(op);
    void op.finally(() => this.inflight.delete(op));
  }

  /**
   * Counts an event that is logged as one warn line per retry tick (the count and the last
   * one's fields): a rebalance on a slow store repeats each per claim range, thousands of times.
   */
  protected tally(what: string, fields: Record<string, unknown>): void {
    const f = this.tallies.get(what);
    if (f) {
      f.count++;
      f.last = fields;
    } else this.tallies.set(what, { count: 1, last: fields });
  }
}

import { SYSTEM_CLOCK, type Clock } from '@granary/core';
import { LeaseLostError } from '../errors';
import type { ClusterLogger } from '../internal/logger';
import { firstShardOf, rangePositions, type KindShards } from '../placement/kind-ranges';
import { placementOf } from '../placement/owner-of';
import type { ClaimReleased, ClusterProvider } from '../providers/cluster-provider';
import { auditClaims } from './claim-audit';
import type { ShardAcquired, ShardReleased, ShardReleaseReason } from './cluster-events';
import { ClaimGate, type FencedMember, type ShardGate } from './fencing';
import { KindClaims, type ClaimStats, type Holder } from './kind-claims';
import { PassScheduler } from './pass-scheduler';
import { EMPTY_TOPOLOGY, type Topology } from './topology';
import { WorkQueue } from './work-queue';
import { ROOT_CONTEXT, type Span } from '@opentelemetry/api';
import {
  ATTR_CLAIM_RANGE,
  ATTR_GRAIN_KIND,
  ATTR_OUTCOME,
  ATTR_REASON,
  ATTR_SHARD,
  ATTR_SHARD_EPOCH,
} from '../telemetry/attributes';
import { ClusterTelemetry, endSpan } from '../telemetry/telemetry';

/** Span names of shard claims and releases. */
const SPAN_CLAIM = 'granary.shard.claim';
const SPAN_RELEASE = 'granary.shard.release';

/** Runs before this member releases a shard on rebalance or graceful shutdown (drain grains). */
export type BeforeReleaseHook = (kind: string, shard: number) => void | Promise<void>;

/**
 * Retry ticks a claim must linger (same holder, same epoch) before the waiting member asks its
 * holder to let go: one full retry period for the holder to release by itself.
 */
const LET_GO_AFTER_TICKS = 2;
/** The audit of this member's claims in the store runs every this many retry ticks. */
const AUDIT_EVERY_TICKS = 10;

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
 * Eager claiming, per claim range: after a topology change, claim each range this member is now
 * the desired owner of, release (after the drain hooks) each range it holds but no longer should,
 * and wait for ranges another member still holds (claim again when the provider reports the
 * claim gone or its holder leaves, or at the latest on the next retry tick).
 *
 * ```
 *   none ──claim ok──▶ held ──desired owner changed──▶ (hooks) ──release──▶ none
 *    │ ▲                 │
 *    │ └─claim released──┼──── waiting (heldBy another)
 *    └──heldBy──▶ waiting│
 *                        └──lease lost──▶ none (fenced until lease-restored)
 * ```
 *
 * Cost per membership change: topology events arriving close together are coalesced into one
 * placement pass (PassScheduler); the pass compares this member's desired ranges under the new
 * placement with the last one and queues only the ranges that changed; the queue is worked in
 * turns of at most TURN_BUDGET_MS.
 */
export class ShardOwnership implements FencedMember {
  private readonly kinds = new Map<string, KindClaims>();
  private readonly list: KindClaims[];
  private readonly gates = new Map<string, ShardGate>();
  private readonly hooks = new Set<BeforeReleaseHook>();
  private readonly inflight = new Set<Promise<void>>();
  /** Releases that failed in the store; retried so the claim does not linger until lease expiry. */
  private readonly orphans = new Map<string, { kind: string; range: number; epoch: number }>();
  private readonly queue: WorkQueue;
  /** Claims started and not settled (the queue pauses at MAX_CLAIMS_IN_FLIGHT). */
  private claiming = 0;
  private readonly passes: PassScheduler;
  /** The newest topology (FencedMember); claims follow it once its placement pass has run. */
  topology: Topology = EMPTY_TOPOLOGY;
  /** Whether `topology` lists this member (see reconcile). */
  private selfListed = false;
  /** True before start, while the lease is lost and after stop (FencedMember). */
  fenced = true;
  private leaving = false;
  private stopped = false;
  /** Bumped on lease loss: results of operations started under an older lease are dropped. */
  private generation = 0;
  /** The retry tick's timer (the clock's handle) while started. */
  private retryTimer: unknown;
  private ticks = 0;
  private auditing = false;
  private auditAgain = false;
  /**
   * Failed claims and releases since the last retry tick, logged once per tick: with thousands
   * of ranges, one line per range would bury the log when the store is unreachable.
   */
  private readonly failures = new Map<string, { count: number; last: Record<string, unknown> }>();

  constructor(
    private readonly provider: ClusterProvider,
    private readonly selfId: string,
    kinds: ReadonlyArray<OwnedKind>,
    private readonly events: ShardOwnershipEvents,
    private readonly logger: ClusterLogger,
    private readonly claimRetryMs: number,
    /** The member's clock: the retry tick and the coalescing of placement passes run on it. */
    private readonly clock: Clock = SYSTEM_CLOCK,
    /** Spans of claims and releases. */
    private readonly telemetry: ClusterTelemetry = ClusterTelemetry.DISABLED,
  ) {
    this.list = kinds.map((k) => new KindClaims(k.name, k.shards));
    for (const k of this.list) {
      this.kinds.set(k.name, k);
      this.gates.set(k.name, new ClaimGate(k, this));
    }
    this.queue = new WorkQueue(
      this.list.map((k) => k.ranges),
      (i, r) => this.reconcile(this.list[i], r),
      undefined,
      () => this.claiming >= MAX_CLAIMS_IN_FLIGHT,
    );
    this.passes = new PassScheduler((t) => this.applyPlacement(t), clock);
  }

  /** The delivery gate of a kind this member hosts (undefined for any other kind). */
  gate(kind: string): ShardGate | undefined {
    return this.gates.get(kind);
  }

  /** Whether the provider can prove the lease is alive right now (FencedMember). */
  leaseValid(): boolean {
    return this.provider.leaseValid();
  }

  /** O(1): true while this member holds the shard's claim and is not fenced. */
  canServe(kind: string, shard: number): boolean {
    const gate = this.gates.get(kind);
    return gate !== undefined && gate.canServe(shard);
  }

  /** Epoch of the held claim covering the shard, or undefined. */
  epochOf(kind: string, shard: number): number | undefined {
    const k = this.kinds.get(kind);
    const r = k?.rangeOf(shard);
    const epoch = r === undefined ? 0 : k!.epochs[r];
    return epoch ? epoch : undefined;
  }

  /** Claim outcomes per kind since start. */
  claimStats(): Array<[string, Readonly<ClaimStats>]> {
    return [...this.kinds.values()].map((k) => [k.name, k.stats]);
  }

  /** Shards of `kind` this member holds, ascending. */
  heldShards(kind: string): number[] {
    const k = this.kinds.get(kind);
    const out: number[] = [];
    if (k)
      for (let r = 0; r < k.ranges; r++) if (k.epochs[r] > 0) k.forEachShard(r, (s) => out.push(s));
    return out;
  }

  /** Adds a drain hook; the returned function removes it. */
  onBeforeRelease(hook: BeforeReleaseHook): () => void {
    this.hooks.add(hook);
    return () => this.hooks.delete(hook);
  }

  /** Starts claiming under `topology` (after join). */
  start(topology: Topology): void {
    this.fenced = false;
    this.scheduleRetry();
    this.applyPlacement(topology);
    this.queue.pushAll();
  }

  /**
   * Resolves once the claims queued so far have been answered (held, found held by another
   * member, or failed: a failure is retried on the retry tick, not waited for), or after
   * `timeoutMs`, whichever comes first. Cluster.start waits on it so a member's first calls find
   * the shards it can claim already claimed, instead of being refused and retried with backoff.
   */
  async claimsAnswered(timeoutMs: number): Promise<void> {
    let timer: unknown;
    const timeout = new Promise<void>((resolve) => {
      timer = this.clock.setTimer(resolve, timeoutMs);
    });
    const answered = (async () => {
      await this.queue.idle();
      while (this.inflight.size > 0 && !this.stopped) await Promise.allSettled([...this.inflight]);
    })();
    try {
      await Promise.race([answered, timeout]);
    } finally {
      this.clock.clearTimer(timer);
    }
  }

  /** A new topology: claim and release to match it (coalesced with others close in time). */
  topologyChanged(topology: Topology): void {
    // The gates name owners under the newest topology at once (NotOwnerError's hint): until the
    // pass runs, the last pass's topology may still name a member that is gone, and a caller
    // following that hint would wait on a dead member until its deadline.
    this.topology = topology;
    this.passes.request(topology);
  }

  /** A claim this member may wait for disappeared in the store. */
  claimReleased(e: ClaimReleased): void {
    const k = this.kinds.get(e.kind);
    if (!k || e.shard >= k.ranges) return;
    if (k.epochs[e.shard] === e.epoch && !k.busy[e.shard]) {
      // Ours, and we did not release it: it vanished (e.g. deleted by an operator).
      this.logger.warn({ kind: e.kind, range: e.shard, epoch: e.epoch }, 'shard claim vanished');
      this.drop(k, e.shard, 'vanished');
    }
    this.reconcile(k, e.shard);
  }

  /** A member left: the ranges waited on it are claimed again now (its claims went with it). */
  memberLeft(member: string): void {
    for (const k of this.list) {
      for (const [r, h] of k.waiting) if (h.member === member) this.reconcile(k, r);
    }
  }

  /** Another member asked this one to check its claims (it waits on one this member holds). */
  letGoAsked(): void {
    void this.audit();
  }

  /** Fence: every claim is treated as gone at once; nothing is claimed until leaseRestored(). */
  leaseLost(): void {
    this.fenced = true;
    this.generation++;
    this.queue.clear();
    for (const k of this.list) {
      k.waiting.clear();
      for (let r = 0; r < k.ranges; r++) if (k.epochs[r] > 0) this.drop(k, r, 'lease-lost');
    }
    this.orphans.clear();
  }

  /**
   * Back (re-registered, or the same lease proven alive): claim again under the current topology.
   * On the same lease the store still holds this member's claims: a wanted one answers with its
   * epoch; the audit, run now, releases those the member no longer wants (the topology may have
   * moved while it was fenced).
   */
  leaseRestored(): void {
    this.fenced = false;
    this.queue.pushAll();
    void this.audit();
  }

  /** Graceful shutdown: stop claiming, drain and release every held range, wait for all of it. */
  async releaseAll(): Promise<void> {
    this.leaving = true;
    this.passes.flush();
    this.queue.pushAll();
    await this.queue.idle();
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
    for (const k of this.list) {
      for (let r = 0; r < k.ranges; r++) if (k.epochs[r] > 0) this.drop(k, r, 'shutdown');
    }
  }

  /** Stops timers and drops every claim locally (the provider's leave deletes them). */
  stop(): void {
    this.stopped = true;
    this.fenced = true;
    this.clock.clearTimer(this.retryTimer);
    this.retryTimer = undefined;
    this.passes.stop();
    this.queue.clear();
    for (const k of this.list) {
      for (let r = 0; r < k.ranges; r++) if (k.epochs[r] > 0) this.drop(k, r, 'shutdown');
    }
  }

  /**
   * Compares the claims the store holds under this member's registration with what it holds
   * (see claim-audit.ts). One audit at a time; a request meanwhile runs another after it.
   */
  async audit(): Promise<void> {
    if (!this.provider.heldClaims || this.stopped || this.fenced) return;
    if (this.auditing) {
      this.auditAgain = true;
      return;
    }
    this.auditing = true;
    const generation = this.generation;
    try {
      const held = await this.provider.heldClaims();
      if (generation !== this.generation || this.stopped) return;
      auditClaims(held, this.kinds, {
        wanted: (k, r) => this.desired(k, r),
        reconcile: (k, r) => this.reconcile(k, r),
        releaseStray: (k, kind, r) => this.track(this.releaseStrayOp(k, kind, r)),
        vanished: (k, r) => {
          this.logger.warn({ kind: k.name, range: r, epoch: k.epochs[r] }, 'shard claim vanished');
          this.drop(k, r, 'vanished');
          this.reconcile(k, r);
        },
      });
    } catch (err) {
      this.logger.debug({ err }, 'claim audit failed; the next one retries');
    } finally {
      this.auditing = false;
      if (this.auditAgain) {
        this.auditAgain = false;
        void this.audit();
      }
    }
  }

  /**
   * One placement pass: this member's desired ranges under `topology`, compared with the last
   * pass; only the ranges that changed are queued for reconciling.
   */
  private applyPlacement(topology: Topology): void {
    if (this.stopped) return;
    this.topology = topology;
    this.selfListed = topology.members.some((m) => m.id === this.selfId);
    const placement = placementOf(topology);
    this.list.forEach((k, i) => {
      const kp = placement.kind(k.name);
      const self = kp.ring.slot(this.selfId);
      const agrees = kp.shards?.ranges === k.ranges && kp.shards.shardCount === k.shards.shardCount;
      if (!agrees && kp.shards) {
        this.logger.error(
          { kind: k.name, mine: k.shards, theirs: kp.shards },
          "members disagree on how a kind is cut into shards; placing by this member's own",
        );
      }
      const positions = agrees ? undefined : rangePositions(k.name, k.ranges).byRange;
      for (let r = 0; r < k.ranges; r++) {
        const owner = positions ? kp.ring.lookup(positions[r]) : kp.owners[r];
        const d = self !== undefined && owner === self ? 1 : 0;
        if (d !== k.desired[r]) {
          k.desired[r] = d;
          this.queue.push(i, r);
        }
      }
    });
  }

  /** A queued claim is still worth sending: same lease generation, range still desired. */
  private stillWanted(k: KindClaims, range: number, generation: number): boolean {
    return generation === this.generation && !this.stopped && this.desired(k, range);
  }

  private desired(k: KindClaims, range: number): boolean {
    return !this.fenced && !this.leaving && k.desired[range] === 1;
  }

  private reconcile(k: KindClaims, range: number): void {
    if (this.stopped) return;
    if (k.busy[range]) {
      k.again[range] = 1;
      return;
    }
    const mine = this.desired(k, range);
    const held = k.epochs[range] > 0;
    if (mine && !held) this.track(this.claimOp(k, range));
    else if (!mine && held) {
      // A topology without this member while its lease is valid is not current (e.g. read
      // before its own key): nobody else can take the range meanwhile, so keep it rather than
      // hand its grains off.
      if (!this.leaving && !this.selfListed) return;
      this.track(this.releaseOp(k, range, this.leaving ? 'shutdown' : 'rebalance'));
    } else if (!mine) k.waiting.delete(range);
  }

  /** The span of one claim or release of a range, when tracing is on. */
  private span(name: string, k: KindClaims, range: number): Span | undefined {
    if (!this.telemetry.tracing) return undefined;
    const attributes = {
      [ATTR_GRAIN_KIND]: k.name,
      [ATTR_SHARD]: firstShardOf(range, k.shards),
      [ATTR_CLAIM_RANGE]: range,
    };
    return this.telemetry.startSpan(name, 0 /* INTERNAL */, attributes, ROOT_CONTEXT);
  }

  private async claimOp(k: KindClaims, range: number): Promise<void> {
    k.busy[range] = 1;
    this.claiming++;
    const generation = this.generation;
    const span = this.span(SPAN_CLAIM, k, range);
    let failure: unknown;
    try {
      const result = await this.provider.claim(k.name, range, () =>
        this.stillWanted(k, range, generation),
      );
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
    } catch (err) {
      k.stats.failed++;
      failure = err;
      if (generation === this.generation && !(err instanceof LeaseLostError)) {
        this.failed('shard claims failed; retrying', { err, kind: k.name, range });
        if (!k.waiting.has(range)) k.waiting.set(range, { member: '', epoch: undefined, seen: 0 });
      }
    } finally {
      if (span !== undefined) endSpan(span, failure);
      this.claiming--;
      this.settle(k, range);
      if (this.claiming < MAX_CLAIMS_IN_FLIGHT) this.queue.resume();
    }
  }

  private async releaseOp(k: KindClaims, range: number, reason: ShardReleaseReason): Promise<void> {
    k.busy[range] = 1;
    const epoch = k.epochs[range];
    const span = this.span(SPAN_RELEASE, k, range);
    span?.setAttributes({ [ATTR_REASON]: reason, [ATTR_SHARD_EPOCH]: epoch });
    try {
      const shards: number[] = [];
      k.forEachShard(range, (s) => shards.push(s));
      for (const hook of [...this.hooks]) {
        for (const shard of shards) {
          try {
            await hook(k.name, shard);
          } catch (err) {
            this.logger.error(
              { err, kind: k.name, shard },
              'before-release hook failed; releasing',
            );
          }
        }
      }
      if (k.epochs[range] !== epoch) return; // lost meanwhile (lease lost): nothing to release
      this.drop(k, range, reason);
      await this.releaseInStore(k.name, range, epoch, this.desiredOwner(k, range));
    } finally {
      span?.end();
      this.settle(k, range);
    }
  }

  /** The range's desired owner under the current topology, if it is another member. */
  private desiredOwner(k: KindClaims, range: number): string | undefined {
    const placement = placementOf(this.topology);
    const id = placement.owner(placement.kind(k.name), range)?.id;
    return id === this.selfId ? undefined : id;
  }

  private async releaseInStore(
    kind: string,
    range: number,
    epoch: number,
    to?: string,
  ): Promise<void> {
    try {
      await this.provider.release(kind, range, epoch, to);
      this.orphans.delete(`${kind}/${range}`);
    } catch (err) {
      this.failed('shard releases failed; retrying', { err, kind, range, epoch });
      this.orphans.set(`${kind}/${range}`, { kind, range, epoch });
    }
  }

  /** Releases a claim the store holds for this member that it did not know of (k: our kind). */
  private async releaseStrayOp(
    k: KindClaims | undefined,
    kind: string,
    range: number,
  ): Promise<void> {
    if (k) k.busy[range] = 1;
    try {
      this.logger.warn({ kind, range }, 'releasing a claim this member did not know of');
      await this.provider.releaseStray?.(kind, range);
    } catch (err) {
      this.logger.warn(
        { err, kind, range },
        'could not release a stray claim; the next audit retries',
      );
    } finally {
      if (k) this.settle(k, range);
    }
  }

  private settle(k: KindClaims, range: number): void {
    k.busy[range] = 0;
    if (k.again[range]) {
      k.again[range] = 0;
      this.reconcile(k, range);
    }
  }

  private drop(k: KindClaims, range: number, reason: ShardReleaseReason): void {
    const epoch = k.epochs[range];
    k.epochs[range] = 0;
    k.forEachShard(range, (shard) => this.events.released({ kind: k.name, shard, epoch, reason }));
  }

  private track(op: Promise<void>): void {
    this.inflight.add(op);
    void op.finally(() => this.inflight.delete(op));
  }

  /** The next retry tick, `claimRetryMs` from now (it does not keep the process alive). */
  private scheduleRetry(): void {
    this.retryTimer = this.clock.setTimer(() => {
      if (this.stopped) return;
      this.retry();
      this.scheduleRetry();
    }, this.claimRetryMs);
    (this.retryTimer as { unref?: () => void } | null)?.unref?.();
  }

  private failed(what: string, fields: Record<string, unknown>): void {
    const f = this.failures.get(what);
    if (f) {
      f.count++;
      f.last = fields;
    } else this.failures.set(what, { count: 1, last: fields });
  }

  private retry(): void {
    for (const [what, f] of this.failures) {
      this.logger.warn({ ...f.last, count: f.count }, `${f.count} ${what} (last one attached)`);
    }
    this.failures.clear();
    if (this.stopped || this.fenced) return;
    for (const o of [...this.orphans.values()]) {
      const k = this.kinds.get(o.kind);
      if (k && k.epochs[o.range] === 0 && !k.busy[o.range])
        void this.releaseInStore(o.kind, o.range, o.epoch);
    }
    const askLetGo = new Set<string>();
    for (const k of this.list) {
      for (const [r, h] of [...k.waiting]) {
        if (h.seen >= LET_GO_AFTER_TICKS && this.lingers(k, r, h)) askLetGo.add(h.member);
        this.reconcile(k, r);
      }
    }
    for (const member of askLetGo) {
      this.logger.info({ member }, 'asking a member to let go of claims it should not hold');
      this.provider.askToLetGo?.(member);
    }
    if (++this.ticks % AUDIT_EVERY_TICKS === 0) void this.audit();
  }

  /**
   * True when the claim a holder keeps on a range this member waits for cannot be a hand-off in
   * progress: the holder is another live member and not the range's desired owner.
   */
  private lingers(k: KindClaims, range: number, h: Holder): boolean {
    if (h.member === this.selfId || h.member === '') return false;
    if (!this.topology.members.some((m) => m.id === h.member)) return false;
    const placement = placementOf(this.topology);
    return placement.owner(placement.kind(k.name), range)?.id !== h.member;
  }
}

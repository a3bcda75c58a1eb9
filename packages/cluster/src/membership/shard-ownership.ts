import { SYSTEM_CLOCK, type Clock } from '@granary/core';
import { LeaseLostError } from '../errors';
import type { ClusterLogger } from '../internal/logger';
import { ownerOf } from '../placement/owner-of';
import type { ClaimReleased, ClusterProvider } from '../providers/cluster-provider';
import type { ShardAcquired, ShardReleased, ShardReleaseReason } from './cluster-events';
import { ClaimGate, type FencedMember, type ShardGate } from './fencing';
import { EMPTY_TOPOLOGY, type Topology } from './topology';
import { ROOT_CONTEXT, type Span } from '@opentelemetry/api';
import {
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

/** Claims of one kind by outcome, since start (the claims metric). */
export interface ClaimStats {
  /** Claims granted. */
  acquired: number;
  /** Claims refused: another member held the shard. */
  conflicts: number;
  /** Claims that failed in the store (retried). */
  failed: number;
}

/** Runs before this member releases a shard on rebalance or graceful shutdown (drain grains). */
export type BeforeReleaseHook = (kind: string, shard: number) => void | Promise<void>;

/** A kind this member hosts and the claim state of each of its shards. */
interface KindState {
  name: string;
  shardCount: number;
  /** Epoch of the held claim per shard; 0 = not held. Float64: etcd revisions pass 2^31. */
  epochs: Float64Array;
  /** 1 while a claim or release of the shard is in flight: one operation per shard at a time. */
  busy: Uint8Array;
  /** 1 if the shard must be looked at again when its operation ends. */
  again: Uint8Array;
  /** Shards this member should own but another member still holds, with whom it waits on. */
  waiting: Map<number, Holder>;
  /** The kind's view for grain delivery. */
  gate: ShardGate;
  /** Claim outcomes so far. */
  stats: ClaimStats;
}

/** Who holds a shard a member waits for, as its last claim attempt found. */
interface Holder {
  member: string;
  /** Epoch of the holder's claim, if the provider said. */
  epoch: number | undefined;
  /** Retry ticks in a row that found this same claim. */
  seen: number;
}

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

/**
 * Eager claiming: after every topology change, claim each shard this member is now the desired
 * owner of, release (after the drain hooks) each shard it holds but no longer should, and wait
 * for shards another member still holds (claim again when the provider reports the claim gone,
 * or at the latest on the next retry tick).
 *
 * ```
 *   none ──claim ok──▶ held ──desired owner changed──▶ (hooks) ──release──▶ none
 *    │ ▲                 │
 *    │ └─claim released──┼──── waiting (heldBy another)
 *    └──heldBy──▶ waiting│
 *                        └──lease lost──▶ none (fenced until lease-restored)
 * ```
 */
export class ShardOwnership implements FencedMember {
  private readonly kinds = new Map<string, KindState>();
  private readonly hooks = new Set<BeforeReleaseHook>();
  private readonly inflight = new Set<Promise<void>>();
  /** Releases that failed in the store; retried so the claim does not linger until lease expiry. */
  private readonly orphans = new Map<string, { kind: string; shard: number; epoch: number }>();
  /** The topology claims follow (FencedMember). */
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

  constructor(
    private readonly provider: ClusterProvider,
    private readonly selfId: string,
    kinds: ReadonlyArray<{ name: string; shardCount: number }>,
    private readonly events: ShardOwnershipEvents,
    private readonly logger: ClusterLogger,
    private readonly claimRetryMs: number,
    /** The member's clock: the retry tick runs on it. */
    private readonly clock: Clock = SYSTEM_CLOCK,
    /** Spans of claims and releases. */
    private readonly telemetry: ClusterTelemetry = ClusterTelemetry.DISABLED,
  ) {
    for (const k of kinds) {
      const epochs = new Float64Array(k.shardCount);
      this.kinds.set(k.name, {
        name: k.name,
        shardCount: k.shardCount,
        epochs,
        busy: new Uint8Array(k.shardCount),
        again: new Uint8Array(k.shardCount),
        waiting: new Map(),
        gate: new ClaimGate(k.name, epochs, this),
        stats: { acquired: 0, conflicts: 0, failed: 0 },
      });
    }
  }

  /** The delivery gate of a kind this member hosts (undefined for any other kind). */
  gate(kind: string): ShardGate | undefined {
    return this.kinds.get(kind)?.gate;
  }

  /** Whether the provider can prove the lease is alive right now (FencedMember). */
  leaseValid(): boolean {
    return this.provider.leaseValid();
  }

  /** O(1): true while this member holds the shard's claim and is not fenced. */
  canServe(kind: string, shard: number): boolean {
    const k = this.kinds.get(kind);
    return k !== undefined && k.gate.canServe(shard);
  }

  /** Epoch of the held claim, or undefined. */
  epochOf(kind: string, shard: number): number | undefined {
    const epoch = this.kinds.get(kind)?.epochs[shard];
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
    if (k) for (let s = 0; s < k.shardCount; s++) if (k.epochs[s] > 0) out.push(s);
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
    this.setTopology(topology);
    this.scheduleRetry();
    this.reconcileAll();
  }

  /** A new topology: claim and release to match it. */
  topologyChanged(topology: Topology): void {
    this.setTopology(topology);
    this.reconcileAll();
  }

  private setTopology(topology: Topology): void {
    this.topology = topology;
    this.selfListed = topology.members.some((m) => m.id === this.selfId);
  }

  /** A claim disappeared in the store. */
  claimReleased(e: ClaimReleased): void {
    const k = this.kinds.get(e.kind);
    if (!k || e.shard >= k.shardCount) return;
    if (k.epochs[e.shard] === e.epoch && !k.busy[e.shard]) {
      // Ours, and we did not release it: it vanished (e.g. deleted by an operator).
      this.logger.warn({ kind: e.kind, shard: e.shard, epoch: e.epoch }, 'shard claim vanished');
      this.drop(k, e.shard, 'vanished');
    }
    this.reconcile(k, e.shard);
  }

  /** Fence: every claim is treated as gone at once; nothing is claimed until leaseRestored(). */
  leaseLost(): void {
    this.fenced = true;
    this.generation++;
    for (const k of this.kinds.values()) {
      k.waiting.clear();
      for (let s = 0; s < k.shardCount; s++) if (k.epochs[s] > 0) this.drop(k, s, 'lease-lost');
    }
    this.orphans.clear();
  }

  /** Re-registered: claim again under the current topology. */
  leaseRestored(): void {
    this.fenced = false;
    this.reconcileAll();
  }

  /** Graceful shutdown: stop claiming, drain and release every held shard, wait for all of it. */
  async releaseAll(): Promise<void> {
    this.leaving = true;
    this.reconcileAll();
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
    for (const k of this.kinds.values()) {
      for (let s = 0; s < k.shardCount; s++) if (k.epochs[s] > 0) this.drop(k, s, 'shutdown');
    }
  }

  /** Stops timers and drops every claim locally (the provider's leave deletes them). */
  stop(): void {
    this.stopped = true;
    this.fenced = true;
    this.clock.clearTimer(this.retryTimer);
    this.retryTimer = undefined;
    for (const k of this.kinds.values()) {
      for (let s = 0; s < k.shardCount; s++) if (k.epochs[s] > 0) this.drop(k, s, 'shutdown');
    }
  }

  private reconcileAll(): void {
    for (const k of this.kinds.values()) {
      for (let s = 0; s < k.shardCount; s++) this.reconcile(k, s);
    }
  }

  private reconcile(k: KindState, shard: number): void {
    if (this.stopped) return;
    if (k.busy[shard]) {
      k.again[shard] = 1;
      return;
    }
    const mine = this.desired(k, shard);
    const held = k.epochs[shard] > 0;
    if (mine && !held) this.track(this.claimOp(k, shard));
    else if (!mine && held) {
      // A topology without this member while its lease is valid is not current (e.g. read
      // before its own key): nobody else can take the shard meanwhile, so keep it rather than
      // hand its grains off.
      if (!this.leaving && !this.selfListed) return;
      this.track(this.releaseOp(k, shard, this.leaving ? 'shutdown' : 'rebalance'));
    } else if (!mine) k.waiting.delete(shard);
  }

  /** A member left: the shards waited on it are claimed again now (its claims went with it). */
  memberLeft(member: string): void {
    for (const k of this.kinds.values()) {
      for (const [s, h] of k.waiting) if (h.member === member) this.reconcile(k, s);
    }
  }

  /** Another member asked this one to check its claims (it waits on one this member holds). */
  letGoAsked(): void {
    void this.audit();
  }

  /**
   * Compares the claims the store holds under this member's registration with what it holds:
   * a claim it does not know of is claimed properly if it is the desired owner (the claim
   * answers with the existing epoch) and released otherwise; a claim it believes it holds that
   * the store does not list (and that is older than the read) vanished. Shards with an operation
   * in flight are left to it. One audit at a time; a request meanwhile runs another after it.
   */
  async audit(): Promise<void> {
    const provider = this.provider;
    if (!provider.heldClaims || this.stopped || this.fenced) return;
    if (this.auditing) {
      this.auditAgain = true;
      return;
    }
    this.auditing = true;
    const generation = this.generation;
    try {
      const held = await provider.heldClaims();
      if (generation !== this.generation || this.stopped) return;
      const inStore = new Map<string, Set<number>>();
      for (const c of held.claims) {
        const k = this.kinds.get(c.kind);
        if (!k || c.shard >= k.shardCount) {
          this.track(this.releaseStrayOp(undefined, c.kind, c.shard)); // not a kind/shard of ours
          continue;
        }
        let set = inStore.get(c.kind);
        if (!set) inStore.set(c.kind, (set = new Set()));
        set.add(c.shard);
        if (k.busy[c.shard] || k.epochs[c.shard] > 0) continue;
        if (this.desired(k, c.shard)) this.reconcile(k, c.shard);
        else this.track(this.releaseStrayOp(k, k.name, c.shard));
      }
      for (const k of this.kinds.values()) {
        const store = inStore.get(k.name);
        for (let s = 0; s < k.shardCount; s++) {
          const epoch = k.epochs[s];
          if (epoch > 0 && epoch <= held.revision && !k.busy[s] && !store?.has(s)) {
            this.logger.warn({ kind: k.name, shard: s, epoch }, 'shard claim vanished');
            this.drop(k, s, 'vanished');
            this.reconcile(k, s);
          }
        }
      }
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

  private desired(k: KindState, shard: number): boolean {
    return (
      !this.fenced && !this.leaving && ownerOf(k.name, shard, this.topology)?.id === this.selfId
    );
  }

  /** Releases a claim the store holds for this member that it did not know of (k: our kind). */
  private async releaseStrayOp(
    k: KindState | undefined,
    kind: string,
    shard: number,
  ): Promise<void> {
    if (k) k.busy[shard] = 1;
    try {
      this.logger.warn({ kind, shard }, 'releasing a claim this member did not know of');
      await this.provider.releaseStray?.(kind, shard);
    } catch (err) {
      this.logger.warn(
        { err, kind, shard },
        'could not release a stray claim; the next audit retries',
      );
    } finally {
      if (k) this.settle(k, shard);
    }
  }

  /** The span of one claim or release, when tracing is on. */
  private span(name: string, k: KindState, shard: number): Span | undefined {
    if (!this.telemetry.tracing) return undefined;
    const attributes = { [ATTR_GRAIN_KIND]: k.name, [ATTR_SHARD]: shard };
    return this.telemetry.startSpan(name, 0 /* INTERNAL */, attributes, ROOT_CONTEXT);
  }

  private async claimOp(k: KindState, shard: number): Promise<void> {
    k.busy[shard] = 1;
    const generation = this.generation;
    const span = this.span(SPAN_CLAIM, k, shard);
    let failure: unknown;
    try {
      const result = await this.provider.claim(k.name, shard);
      if ('epoch' in result) {
        k.stats.acquired++;
        span?.setAttributes({ [ATTR_OUTCOME]: 'acquired', [ATTR_SHARD_EPOCH]: result.epoch });
      } else {
        k.stats.conflicts++;
        span?.setAttribute(ATTR_OUTCOME, 'conflict');
      }
      if (generation !== this.generation || this.stopped) return;
      if ('epoch' in result) {
        k.waiting.delete(shard);
        k.epochs[shard] = result.epoch;
        this.events.acquired({ kind: k.name, shard, epoch: result.epoch });
      } else {
        const before = k.waiting.get(shard);
        const same =
          before?.member === result.heldBy &&
          result.holderEpoch !== undefined &&
          before.epoch === result.holderEpoch;
        k.waiting.set(shard, {
          member: result.heldBy,
          epoch: result.holderEpoch,
          seen: same ? before.seen + 1 : 1,
        });
      }
    } catch (err) {
      k.stats.failed++;
      failure = err;
      if (generation === this.generation && !(err instanceof LeaseLostError)) {
        this.logger.warn({ err, kind: k.name, shard }, 'shard claim failed; retrying');
        if (!k.waiting.has(shard)) k.waiting.set(shard, { member: '', epoch: undefined, seen: 0 });
      }
    } finally {
      if (span !== undefined) endSpan(span, failure);
      this.settle(k, shard);
    }
  }

  private async releaseOp(k: KindState, shard: number, reason: ShardReleaseReason): Promise<void> {
    k.busy[shard] = 1;
    const epoch = k.epochs[shard];
    const span = this.span(SPAN_RELEASE, k, shard);
    span?.setAttributes({ [ATTR_REASON]: reason, [ATTR_SHARD_EPOCH]: epoch });
    try {
      for (const hook of [...this.hooks]) {
        try {
          await hook(k.name, shard);
        } catch (err) {
          this.logger.error({ err, kind: k.name, shard }, 'before-release hook failed; releasing');
        }
      }
      if (k.epochs[shard] !== epoch) return; // lost meanwhile (lease lost): nothing to release
      this.drop(k, shard, reason);
      await this.releaseInStore(k.name, shard, epoch);
    } finally {
      span?.end();
      this.settle(k, shard);
    }
  }

  private async releaseInStore(kind: string, shard: number, epoch: number): Promise<void> {
    try {
      await this.provider.release(kind, shard, epoch);
      this.orphans.delete(`${kind}/${shard}`);
    } catch (err) {
      this.logger.warn({ err, kind, shard, epoch }, 'shard release failed; retrying');
      this.orphans.set(`${kind}/${shard}`, { kind, shard, epoch });
    }
  }

  private settle(k: KindState, shard: number): void {
    k.busy[shard] = 0;
    if (k.again[shard]) {
      k.again[shard] = 0;
      this.reconcile(k, shard);
    }
  }

  private drop(k: KindState, shard: number, reason: ShardReleaseReason): void {
    const epoch = k.epochs[shard];
    k.epochs[shard] = 0;
    this.events.released({ kind: k.name, shard, epoch, reason });
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

  private retry(): void {
    if (this.stopped || this.fenced) return;
    for (const o of [...this.orphans.values()]) {
      const k = this.kinds.get(o.kind);
      if (k && k.epochs[o.shard] === 0 && !k.busy[o.shard])
        void this.releaseInStore(o.kind, o.shard, o.epoch);
    }
    const askLetGo = new Set<string>();
    for (const k of this.kinds.values()) {
      for (const [s, h] of [...k.waiting]) {
        if (h.seen >= LET_GO_AFTER_TICKS && this.lingers(k, s, h.member)) askLetGo.add(h.member);
        this.reconcile(k, s);
      }
    }
    for (const member of askLetGo) {
      this.logger.info({ member }, 'asking a member to let go of claims it should not hold');
      this.provider.askToLetGo?.(member);
    }
    if (++this.ticks % AUDIT_EVERY_TICKS === 0) void this.audit();
  }

  /**
   * True when the claim `holder` keeps on a shard this member waits for cannot be a hand-off in
   * progress: the holder is another live member and not the shard's desired owner.
   */
  private lingers(k: KindState, shard: number, holder: string): boolean {
    if (holder === this.selfId || holder === '') return false;
    if (!this.topology.members.some((m) => m.id === holder)) return false;
    return ownerOf(k.name, shard, this.topology)?.id !== holder;
  }
}

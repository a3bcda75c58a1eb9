import { LeaseLostError } from '../errors';
import type { ClusterLogger } from '../internal/logger';
import { ownerOf } from '../placement/owner-of';
import type { ClaimReleased, ClusterProvider } from '../providers/cluster-provider';
import type { ShardAcquired, ShardReleased, ShardReleaseReason } from './cluster-events';
import { EMPTY_TOPOLOGY, type Topology } from './topology';

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
  /** Shards this member should own but another member still holds. */
  waiting: Set<number>;
}

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
export class ShardOwnership {
  private readonly kinds = new Map<string, KindState>();
  private readonly hooks = new Set<BeforeReleaseHook>();
  private readonly inflight = new Set<Promise<void>>();
  /** Releases that failed in the store; retried so the claim does not linger until lease expiry. */
  private readonly orphans = new Map<string, { kind: string; shard: number; epoch: number }>();
  private topology: Topology = EMPTY_TOPOLOGY;
  private fenced = true;
  private leaving = false;
  private stopped = false;
  /** Bumped on lease loss: results of operations started under an older lease are dropped. */
  private generation = 0;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly provider: ClusterProvider,
    private readonly selfId: string,
    kinds: ReadonlyArray<{ name: string; shardCount: number }>,
    private readonly events: ShardOwnershipEvents,
    private readonly logger: ClusterLogger,
    private readonly claimRetryMs: number,
  ) {
    for (const k of kinds) {
      this.kinds.set(k.name, {
        name: k.name,
        shardCount: k.shardCount,
        epochs: new Float64Array(k.shardCount),
        busy: new Uint8Array(k.shardCount),
        again: new Uint8Array(k.shardCount),
        waiting: new Set(),
      });
    }
  }

  /** O(1): true while this member holds the shard's claim and is not fenced. */
  canServe(kind: string, shard: number): boolean {
    if (this.fenced) return false;
    const k = this.kinds.get(kind);
    return k !== undefined && k.epochs[shard] > 0 && this.provider.leaseValid();
  }

  /** Epoch of the held claim, or undefined. */
  epochOf(kind: string, shard: number): number | undefined {
    const epoch = this.kinds.get(kind)?.epochs[shard];
    return epoch ? epoch : undefined;
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
    this.topology = topology;
    this.retryTimer = setInterval(() => this.retry(), this.claimRetryMs);
    this.retryTimer.unref();
    this.reconcileAll();
  }

  /** A new topology: claim and release to match it. */
  topologyChanged(topology: Topology): void {
    this.topology = topology;
    this.reconcileAll();
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
    clearInterval(this.retryTimer);
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
    const mine =
      !this.fenced && !this.leaving && ownerOf(k.name, shard, this.topology)?.id === this.selfId;
    const held = k.epochs[shard] > 0;
    if (mine && !held) this.track(this.claimOp(k, shard));
    else if (!mine && held)
      this.track(this.releaseOp(k, shard, this.leaving ? 'shutdown' : 'rebalance'));
    else if (!mine) k.waiting.delete(shard);
  }

  private async claimOp(k: KindState, shard: number): Promise<void> {
    k.busy[shard] = 1;
    const generation = this.generation;
    try {
      const result = await this.provider.claim(k.name, shard);
      if (generation !== this.generation || this.stopped) return;
      if ('epoch' in result) {
        k.waiting.delete(shard);
        k.epochs[shard] = result.epoch;
        this.events.acquired({ kind: k.name, shard, epoch: result.epoch });
      } else {
        k.waiting.add(shard);
      }
    } catch (err) {
      if (generation === this.generation && !(err instanceof LeaseLostError)) {
        this.logger.warn({ err, kind: k.name, shard }, 'shard claim failed; retrying');
        k.waiting.add(shard);
      }
    } finally {
      this.settle(k, shard);
    }
  }

  private async releaseOp(k: KindState, shard: number, reason: ShardReleaseReason): Promise<void> {
    k.busy[shard] = 1;
    const epoch = k.epochs[shard];
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

  private retry(): void {
    if (this.stopped || this.fenced) return;
    for (const o of [...this.orphans.values()]) {
      const k = this.kinds.get(o.kind);
      if (k && k.epochs[o.shard] === 0 && !k.busy[o.shard])
        void this.releaseInStore(o.kind, o.shard, o.epoch);
    }
    for (const k of this.kinds.values()) for (const s of [...k.waiting]) this.reconcile(k, s);
  }
}

import { SYSTEM_CLOCK, type Clock } from '@granary/core';
import type { ClusterLogger } from '../internal/logger';
import { rangePositions } from '../placement/kind-ranges';
import { placementOf } from '../placement/owner-of';
import type { ClaimReleased, ClusterProvider } from '../providers/cluster-provider';
import { ClusterTelemetry } from '../telemetry/telemetry';
import { auditClaims } from './claim-audit';
import { releaseClaims } from './claim-calls';
import { ClaimGate, type FencedMember, type ShardGate } from './fencing';
import type { ClaimStats, Holder, KindClaims } from './kind-claims';
import { PassScheduler } from './pass-scheduler';
import {
  ShardClaims,
  type BeforeReleaseHook,
  type OwnedKind,
  type ShardOwnershipEvents,
} from './shard-claims';
import type { Topology } from './topology';

export {
  MAX_CLAIMS_IN_FLIGHT,
  type BeforeReleaseHook,
  type OwnedKind,
  type ShardOwnershipEvents,
} from './shard-claims';

/**
 * Retry ticks a claim must linger (same holder, same epoch) before the waiting member asks its
 * holder to let go: one full retry period for the holder to release by itself.
 */
const LET_GO_AFTER_TICKS = 2;
/** The audit of this member's claims in the store runs every this many retry ticks. */
const AUDIT_EVERY_TICKS = 10;

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
 * placement with the last one and queues only the ranges that changed; the queues are worked in
 * turns of at most TURN_BUDGET_MS (ranges to release in their own queue, which the claim window
 * does not pause).
 */
export class ShardOwnership extends ShardClaims implements FencedMember {
  private readonly gates = new Map<string, ShardGate>();
  private readonly passes: PassScheduler;
  /** The retry tick's timer (the clock's handle) while started. */
  private retryTimer: unknown;
  private ticks = 0;
  private auditing = false;
  private auditAgain = false;

  constructor(
    provider: ClusterProvider,
    selfId: string,
    kinds: ReadonlyArray<OwnedKind>,
    events: ShardOwnershipEvents,
    logger: ClusterLogger,
    private readonly claimRetryMs: number,
    /** The member's clock: the retry tick and the coalescing of placement passes run on it. */
    private readonly clock: Clock = SYSTEM_CLOCK,
    /** Spans of claims and releases. */
    telemetry: ClusterTelemetry = ClusterTelemetry.DISABLED,
  ) {
    super(provider, selfId, kinds, events, logger, telemetry);
    for (const k of this.list) this.gates.set(k.name, new ClaimGate(k, this));
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
      await this.settled(() => this.stopped);
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
    // A hand-off note names the sender's claim: one naming ours is forged (anyone who can write
    // under the prefix can write a note), and ours is checked by the audit, not dropped on it.
    if (k.epochs[e.shard] === e.epoch && !k.busy[e.shard] && e.handOff !== true) {
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
    this.flush(); // decided under the lease just lost: their answers are dropped as stale
    this.fenced = true;
    this.generation++;
    this.queue.clear();
    this.releases.clear();
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
    await this.releases.idle();
    await this.settled(() => false);
    for (const k of this.list) {
      for (let r = 0; r < k.ranges; r++) if (k.epochs[r] > 0) this.drop(k, r, 'shutdown');
    }
  }

  /** Stops timers and drops every claim locally (the provider's leave deletes them). */
  stop(): void {
    this.flush();
    this.stopped = true;
    this.fenced = true;
    this.clock.clearTimer(this.retryTimer);
    this.retryTimer = undefined;
    this.logTallies();
    this.passes.stop();
    this.queue.clear();
    this.releases.clear();
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
    // etcd lists a lease's keys before it reads the revision it answers with, so a claim applied
    // meanwhile has an epoch within that revision but is not listed: only a claim held since
    // before the read was sent can have vanished.
    const before = new Map(this.list.map((k) => [k, k.epochs.slice()]));
    try {
      const held = await this.provider.heldClaims();
      if (generation !== this.generation || this.stopped) return;
      auditClaims(held, this.kinds, {
        wanted: (k, r) => this.desired(k, r),
        reconcile: (k, r) => this.reconcile(k, r),
        releaseStray: (k, kind, r) => this.track(this.releaseStrayOp(k, kind, r)),
        vanished: (k, r) => {
          if (before.get(k)![r] !== k.epochs[r]) return;
          this.tally('shard claims vanished', { kind: k.name, range: r, epoch: k.epochs[r] });
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
          if (d === 0 && (k.epochs[r] > 0 || k.busy[r])) this.releases.push(i, r);
          else this.queue.push(i, r);
        }
      }
    });
  }

  /** One line per event counted since the last tick (see tally). */
  private logTallies(): void {
    for (const [what, f] of this.tallies) {
      this.logger.warn({ ...f.last, count: f.count }, `${f.count} ${what} (last one attached)`);
    }
    this.tallies.clear();
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
    this.logTallies();
    if (this.stopped || this.fenced) return;
    for (const o of [...this.orphans.values()]) {
      const k = this.kinds.get(o.kind);
      if (k && k.epochs[o.range] === 0 && !k.busy[o.range]) {
        const request = [{ shard: o.range, epoch: o.epoch }];
        void releaseClaims(this.provider, o.kind, request, (_, err) =>
          this.releasedInStore(o.kind, o.range, o.epoch, err),
        );
      }
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

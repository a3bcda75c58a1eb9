import { InvalidOptionError, SYSTEM_CLOCK, type Clock } from '@granary/core';
import { LeaseLostError, NotJoinedError } from '../../errors';
import { rejectUnknownOptions } from '@granary/core/internal';
import { Listeners } from '../../internal/listeners';
import type { Topology } from '../../membership/topology';
import type {
  ClaimReleased,
  ClaimResult,
  ClusterProvider,
  JoinRequest,
  LeaseHealth,
  ReleaseRequest,
} from '../cluster-provider';
import type { MemoryClusterTable } from './memory-table';

/** Options of MemoryProvider. */
export interface MemoryProviderOptions {
  /**
   * Lease TTL: a member whose keep-alives stop is removed (with its claims) after this long.
   * @default 3000
   */
  ttlMs?: number;
  /**
   * How often the member keeps its lease alive; must be well inside the TTL.
   * @default ttlMs / 4
   */
  keepAliveIntervalMs?: number;
}

/** Every option MemoryProvider knows (the compiler keeps it in step). */
export const MEMORY_PROVIDER_OPTION_KEYS = {
  ttlMs: true,
  keepAliveIntervalMs: true,
} as const satisfies Record<keyof MemoryProviderOptions, true>;

/** Defaults of MemoryProviderOptions (keepAliveIntervalMs is derived from ttlMs). */
export const DEFAULT_MEMORY_PROVIDER_OPTIONS = { ttlMs: 3000 } as const;

/**
 * The member stops trusting its lease this fraction of the TTL before the table would expire it,
 * so it fences itself before anyone else can claim its shards.
 */
const SAFETY_MARGIN_FRACTION = 0.25;

/**
 * ClusterProvider for one process: several members (one provider each) share a
 * MemoryClusterTable. Same semantics as EtcdProvider: leased registration, claims that die with
 * the lease, epochs from one revision counter, lease-lost and re-registration with a new
 * incarnation. For fast tests and single-process demos.
 *
 * @example
 * const table = new MemoryClusterTable();
 * const a = await Cluster.start({ name: 'c', provider: new MemoryProvider(table), kinds: ['K'] });
 */
export class MemoryProvider implements ClusterProvider {
  private readonly ttlMs: number;
  private readonly keepAliveMs: number;
  private self: JoinRequest | undefined;
  private leaseId = 0;
  private validUntil = 0;
  private lost = false;
  private status: 'up' | 'leaving' = 'up';
  /** The keep-alive timer (the clock's handle), while joined. */
  private timer: unknown;
  /** The member's actor system's clock (lease validity, keep-alives). */
  private clock: Clock = SYSTEM_CLOCK;
  private unsubscribe: Array<() => void> = [];
  private readonly topologyListeners = new Listeners<Topology>();
  private readonly releaseListeners = new Listeners<ClaimReleased>();
  private readonly healthListeners = new Listeners<LeaseHealth>();

  constructor(
    private readonly table: MemoryClusterTable,
    options: MemoryProviderOptions = {},
  ) {
    rejectUnknownOptions('MemoryProvider', options, MEMORY_PROVIDER_OPTION_KEYS);
    const ttlMs = options.ttlMs ?? DEFAULT_MEMORY_PROVIDER_OPTIONS.ttlMs;
    if (!Number.isFinite(ttlMs) || ttlMs <= 0) {
      throw new InvalidOptionError('ttlMs', `must be a positive number, got ${ttlMs}`);
    }
    const keepAliveMs = options.keepAliveIntervalMs ?? ttlMs / 4;
    if (!(keepAliveMs > 0 && keepAliveMs < ttlMs * (1 - SAFETY_MARGIN_FRACTION))) {
      throw new InvalidOptionError(
        'keepAliveIntervalMs',
        `must be > 0 and well inside ttlMs (${ttlMs}), got ${keepAliveMs}`,
      );
    }
    this.ttlMs = ttlMs;
    this.keepAliveMs = keepAliveMs;
  }

  async join(self: JoinRequest): Promise<void> {
    this.self = self;
    this.clock = self.system?.clock ?? SYSTEM_CLOCK;
    this.unsubscribe = [
      this.table.onTopology((t) => this.topologyListeners.emit(t)),
      this.table.onClaimReleased((e) => this.releaseListeners.emit(e)),
    ];
    this.register();
    this.scheduleKeepAlive();
  }

  async markLeaving(): Promise<void> {
    const self = this.requireSelf('markLeaving');
    this.status = 'leaving';
    this.table.putMember(this.leaseId, { ...self, status: 'leaving' });
  }

  async leave(): Promise<void> {
    if (!this.self) return;
    this.stop();
    this.table.revokeLease(this.leaseId);
  }

  /**
   * Test hook: the member dies without a word, like a SIGKILL. Keep-alives stop and it hears no
   * more events; the table removes it and its claims when the lease expires.
   */
  crash(): void {
    this.stop();
  }

  topology(): Topology {
    return this.table.topology();
  }

  onTopology(listener: (t: Topology) => void): () => void {
    return this.topologyListeners.add(listener);
  }

  async claim(kind: string, shard: number): Promise<ClaimResult> {
    const self = this.requireSelf('claim');
    if (!this.leaseValid()) throw new LeaseLostError(`claim ${kind}/${shard}`);
    const result = this.table.claim(kind, shard, self.id, this.leaseId);
    if (!result) throw new LeaseLostError(`claim ${kind}/${shard}`);
    return result;
  }

  async release(kind: string, shard: number, epoch: number): Promise<void> {
    this.requireSelf('release');
    this.table.release(kind, shard, epoch);
  }

  /** `claim` of each shard, in one call (a member starting alone claims every range). */
  async claimMany(kind: string, shards: readonly number[]): Promise<ClaimResult[]> {
    const self = this.requireSelf('claim');
    const lost = (): LeaseLostError => new LeaseLostError(`claim ${shards.length} of ${kind}`);
    if (!this.leaseValid()) throw lost();
    const results: ClaimResult[] = [];
    for (const shard of shards) {
      const result = this.table.claim(kind, shard, self.id, this.leaseId);
      if (!result) throw lost(); // the lease is gone from the table, and every claim with it
      results.push(result);
    }
    return results;
  }

  /** `release` of each claim, in one call. */
  async releaseMany(kind: string, releases: readonly ReleaseRequest[]): Promise<void> {
    this.requireSelf('release');
    for (const r of releases) this.table.release(kind, r.shard, r.epoch);
  }

  onClaimReleased(listener: (e: ClaimReleased) => void): () => void {
    return this.releaseListeners.add(listener);
  }

  onLeaseHealth(listener: (e: LeaseHealth) => void): () => void {
    return this.healthListeners.add(listener);
  }

  leaseValid(): boolean {
    if (this.lost || !this.self) return false;
    if (this.clock.monotonic() < this.validUntil) return true;
    this.loseLease();
    return false;
  }

  private register(): void {
    const self = this.requireSelf('join');
    this.leaseId = this.table.grantLease(self.id, this.ttlMs);
    this.validUntil = this.clock.monotonic() + this.ttlMs * (1 - SAFETY_MARGIN_FRACTION);
    this.table.putMember(this.leaseId, {
      id: self.id,
      address: self.address,
      kinds: [...self.kinds],
      kindShards: self.kindShards,
      status: this.status,
    });
  }

  /** The next keep-alive, `keepAliveIntervalMs` from now (it does not keep the process alive). */
  private scheduleKeepAlive(): void {
    this.timer = this.clock.setTimer(() => {
      this.keepAlive();
      if (this.timer !== undefined) this.scheduleKeepAlive();
    }, this.keepAliveMs);
    (this.timer as { unref?: () => void } | null)?.unref?.();
  }

  private keepAlive(): void {
    if (this.lost) return;
    const sentAt = this.clock.monotonic();
    if (this.table.keepAlive(this.leaseId)) {
      this.validUntil = sentAt + this.ttlMs * (1 - SAFETY_MARGIN_FRACTION);
    } else {
      this.loseLease();
    }
  }

  /** Fence at once, then re-register with a new lease and incarnation from a later task. */
  private loseLease(): void {
    if (this.lost || !this.self) return;
    this.lost = true;
    // leaseValid() is already false; listeners run after the caller (often canServe) returns.
    queueMicrotask(() => this.healthListeners.emit('lease-lost'));
    this.table.revokeLease(this.leaseId);
    this.clock.setTimer(() => {
      if (!this.self || this.timer === undefined) return;
      this.register();
      this.lost = false;
      this.healthListeners.emit('lease-restored');
    }, 0);
  }

  private stop(): void {
    this.clock.clearTimer(this.timer);
    this.timer = undefined;
    for (const off of this.unsubscribe) off();
    this.unsubscribe = [];
    this.self = undefined;
  }

  private requireSelf(operation: string): JoinRequest {
    if (!this.self) throw new NotJoinedError(operation);
    return this.self;
  }
}

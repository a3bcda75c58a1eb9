import { ownerOf } from '../placement/owner-of';
import type { KindClaims } from './kind-claims';
import type { Topology } from './topology';

/**
 * Fencing: a member delivers to a grain only while it holds the claim on the grain's shard AND
 * can prove its lease is still alive. The claim's epoch is the fencing token of state writes;
 * the lease check reads the clock, so after a blocked event loop a member is fenced at wake-up,
 * before any timer or lease-lost event has run (see the README's "Self-fencing").
 */

/**
 * What grain delivery asks of shard ownership, for one kind: the narrow view routers and
 * activations get instead of the cluster (checked once per delivery, O(1)).
 */
export interface ShardGate {
  /** True only while this member holds the shard's claim and its lease is provably alive. */
  canServe(shard: number): boolean;
  /** The epoch of this member's claim on the shard (the state fencing token); 0 when not held. */
  epochOf(shard: number): number;
  /** The address of the shard's desired owner under the member's topology, if any. */
  ownerOf(shard: number): string | undefined;
  /** True while this whole member is fenced (lease lost or not provably alive). */
  memberFenced(): boolean;
  /**
   * True while the member's lease is provably alive (a clock read): what a state write needs.
   * Unlike memberFenced it stays true while a member stops with its lease still held, so the
   * last writes of a shutdown land.
   */
  leaseValid(): boolean;
}

/** The member-wide side of fencing, kept by shard ownership. */
export interface FencedMember {
  /** True before join, after a lease loss (until re-registered) and after stop. */
  readonly fenced: boolean;
  /** The newest topology (owners named to callers are computed under it). */
  readonly topology: Topology;
  /** Whether the lease is provably alive right now (a clock read). */
  leaseValid(): boolean;
}

/**
 * The ShardGate of one kind over the epochs of its held claims. A claim covers a range of
 * shards (one shard by default, when ranges === shardCount: then the shard is the index).
 */
export class ClaimGate implements ShardGate {
  private readonly kind: string;
  /** Epoch of the held claim per range; 0 = not held (owned by shard ownership). */
  private readonly epochs: Float64Array;
  private readonly oneShardPerRange: boolean;

  constructor(
    private readonly claims: KindClaims,
    private readonly member: FencedMember,
  ) {
    this.kind = claims.name;
    this.epochs = claims.epochs;
    this.oneShardPerRange = claims.shards.ranges === claims.shards.shardCount;
  }

  private range(shard: number): number {
    return this.oneShardPerRange ? shard : (this.claims.rangeOf(shard) ?? -1);
  }

  canServe(shard: number): boolean {
    const member = this.member;
    return this.epochs[this.range(shard)]! > 0 && !member.fenced && member.leaseValid();
  }

  epochOf(shard: number): number {
    return this.epochs[this.range(shard)] ?? 0;
  }

  ownerOf(shard: number): string | undefined {
    return ownerOf(this.kind, shard, this.member.topology)?.address;
  }

  memberFenced(): boolean {
    return this.member.fenced || !this.member.leaseValid();
  }

  leaseValid(): boolean {
    return this.member.leaseValid();
  }
}

import { firstShardOf, rangeOfShard, type KindShards } from '../placement/kind-ranges';

/** Who holds a range a member waits for, as its last claim attempt found. */
export interface Holder {
  member: string;
  /** Epoch of the holder's claim, if the provider said. */
  epoch: number | undefined;
  /** Retry ticks in a row that found this same claim. */
  seen: number;
}

/** Claims of one kind by outcome, since start (the claims metric). */
export interface ClaimStats {
  /** Claims granted. */
  acquired: number;
  /** Claims refused: another member held the range. */
  conflicts: number;
  /** Claims that failed in the store (retried). */
  failed: number;
}

/**
 * A kind this member hosts and the claim state of each of its claim ranges (a range is
 * `shardCount / ranges` contiguous shards, one shard by default: see KindShards).
 */
export class KindClaims {
  /** Epoch of the held claim per range; 0 = not held. Float64: etcd revisions pass 2^31. */
  readonly epochs: Float64Array;
  /** 1 while a claim or release of the range is in flight: one operation per range at a time. */
  readonly busy: Uint8Array;
  /** 1 if the range must be looked at again when its operation ends. */
  readonly again: Uint8Array;
  /** 1 where this member is the range's desired owner under the placement applied last. */
  readonly desired: Uint8Array;
  /** Ranges this member should own but another member still holds, with whom it waits on. */
  readonly waiting = new Map<number, Holder>();
  /**
   * Ranges whose claim reconcile decided on in this turn, not sent yet: they go to the store
   * together at the end of the turn (ShardClaims.flush), marked busy meanwhile.
   */
  toClaim: number[] = [];
  /** Releases decided on in this turn, not started yet: range, epoch, reason (a ReleaseCode). */
  toRelease: number[] = [];
  /** Claim outcomes so far (one per range claimed). */
  readonly stats: ClaimStats = { acquired: 0, conflicts: 0, failed: 0 };

  constructor(
    readonly name: string,
    readonly shards: KindShards,
  ) {
    const n = shards.ranges;
    this.epochs = new Float64Array(n);
    this.busy = new Uint8Array(n);
    this.again = new Uint8Array(n);
    this.desired = new Uint8Array(n);
  }

  /** Number of claim ranges. */
  get ranges(): number {
    return this.shards.ranges;
  }

  /** The range of a shard (undefined if out of bounds). */
  rangeOf(shard: number): number | undefined {
    if (!(shard >= 0 && shard < this.shards.shardCount)) return undefined;
    return rangeOfShard(shard, this.shards);
  }

  /** Calls `fn` for each shard of `range`, ascending. */
  forEachShard(range: number, fn: (shard: number) => void): void {
    const end =
      range + 1 < this.ranges ? firstShardOf(range + 1, this.shards) : this.shards.shardCount;
    for (let s = firstShardOf(range, this.shards); s < end; s++) fn(s);
  }
}

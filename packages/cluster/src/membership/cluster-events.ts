import type { Member, Topology } from './topology';

/** A shard this member now holds a claim on. */
export interface ShardAcquired {
  kind: string;
  shard: number;
  /** The claim's epoch: the fencing token for state writes of grains in this shard. */
  epoch: number;
}

/** Why a member stopped holding a shard. */
export type ShardReleaseReason =
  /** The desired owner changed (join, leave, death of another member). */
  | 'rebalance'
  /** The lease was lost: every claim is treated as gone at once. */
  | 'lease-lost'
  /** The member shut down. */
  | 'shutdown'
  /** The claim vanished in the store without this member releasing it. */
  | 'vanished';

/** Every {@link ShardReleaseReason} (the metrics report each at 0 from the start). */
export const SHARD_RELEASE_REASONS: readonly ShardReleaseReason[] = [
  'rebalance',
  'lease-lost',
  'shutdown',
  'vanished',
];

/** A shard this member no longer holds. */
export interface ShardReleased extends ShardAcquired {
  reason: ShardReleaseReason;
}

/** Events of a Cluster, by name. */
export interface ClusterEvents {
  /** A member (or a new incarnation of one) appeared in the topology. */
  'member-joined': Member;
  /** A member (or an old incarnation of one) left the topology. */
  'member-left': Member;
  /** Every new topology. */
  topology: Topology;
  'shard-acquired': ShardAcquired;
  'shard-released': ShardReleased;
  /** This member fenced itself: canServe() is false everywhere until it re-registers. */
  'lease-lost': void;
  /** This member re-registered with a new incarnation and claims again. */
  'lease-restored': void;
}

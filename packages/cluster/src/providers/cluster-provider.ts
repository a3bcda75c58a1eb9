import type { ActorSystem, Logger } from '@granary/core';
import type { Topology } from '../membership/topology';
import type { KindShards } from '../placement/kind-ranges';

/** What a node tells the provider about itself when it joins. */
export interface JoinRequest {
  /** Cluster name: members of different clusters never see each other. */
  cluster: string;
  /** Member id, unique in the cluster. */
  id: string;
  /** Remote address other members use. */
  address: string;
  /** Kinds this member hosts. */
  kinds: string[];
  /**
   * How each hosted kind is cut into shards and claim ranges: listed in the topology, and
   * compared at join (hosts of a kind must agree).
   */
  kindShards?: Record<string, KindShards> | undefined;
  /**
   * The member's actor system (with its remote transport, if any): providers that talk over the
   * remote transport (SeedProvider) need it; others ignore it.
   */
  system?: ActorSystem;
  /**
   * The member's logger, bound with `{ node }` (the one given to Cluster.start): a provider
   * without a logger of its own logs here, as a child bound with its `component`.
   */
  logger?: Logger;
}

/**
 * The result of a claim: `epoch` (a number that grows with every new claim of the shard; the
 * fencing token of state writes) when granted, `heldBy` (a member id) when another member, or an
 * older incarnation of this one, still holds the shard; `holderEpoch` is the epoch of that claim
 * when the provider knows it (a waiting member tells a claim that lingers from a new one);
 * `abandoned` when the claim's `wanted` check said no before the provider sent it (nothing was
 * written).
 */
export type ClaimResult =
  { epoch: number } | { heldBy: string; holderEpoch?: number } | { abandoned: true };

/** One release of a batch (ClusterProvider.releaseMany): the arguments of `release`. */
export interface ReleaseRequest {
  shard: number;
  epoch: number;
  /** The member the releaser believes is the shard's desired owner, if another one. */
  to?: string | undefined;
}

/** The claims a store holds under this member's current registration, read at `revision`. */
export interface HeldClaims {
  /**
   * The store revision of the read: a claim granted after it (epoch above it) may be missing
   * from `claims` without having vanished. (etcd reads this revision after listing the keys, so
   * a claim granted while the read ran can be missing too: the audit only counts a claim held
   * before the read as vanished.)
   */
  revision: number;
  claims: Array<{ kind: string; shard: number }>;
}

/** Lease health transitions: lost means "fence now", restored means "re-registered, claim again". */
export type LeaseHealth = 'lease-lost' | 'lease-restored';

/** A claim disappeared (released, or its holder's lease expired). */
export interface ClaimReleased {
  kind: string;
  shard: number;
  /** Epoch of the claim that went away. */
  epoch: number;
  /**
   * True when another member said so (an etcd hand-off note), not the store: it speaks for
   * its own claims only, so it never makes the receiver drop one it holds.
   */
  handOff?: boolean | undefined;
}

/**
 * Membership and shard claims. One instance per member. Implementations: `MemoryProvider` (one
 * process), `SeedProvider` (development clustering), `EtcdProvider` (production).
 *
 * Guarantees every implementation keeps: at most one claim per (kind, shard) at a time; a claim
 * dies with its holder's registration (lease); epochs of successive claims of a shard grow; the
 * topology version only grows.
 */
export interface ClusterProvider {
  /** Registers the member (status `up`) and starts following the topology. */
  join(self: JoinRequest): Promise<void>;
  /** Sets this member's status to `leaving`: others stop choosing it as an owner. */
  markLeaving(): Promise<void>;
  /** Removes the member and every claim it holds; stops following the topology. */
  leave(): Promise<void>;
  /** The latest topology this member has seen (including itself). */
  topology(): Topology;
  /** Called with every new topology; returns an unsubscribe function. */
  onTopology(listener: (t: Topology) => void): () => void;
  /**
   * Claims a shard for this member if nobody holds it. `wanted`, when given, is asked right before
   * the claim goes to the store: a provider that queues claims (etcd, under a burst) drops one the
   * member no longer wants and answers `{ abandoned: true }`, so a join storm does not write claims
   * that would be released at once.
   */
  claim(kind: string, shard: number, wanted?: () => boolean): Promise<ClaimResult>;
  /**
   * Releases a claim, only if `epoch` is still the shard's current epoch; `to` names the member
   * the releaser believes is the shard's desired owner (a provider may tell it directly).
   */
  release(kind: string, shard: number, epoch: number, to?: string): Promise<void>;
  /**
   * Optional: claims several shards of one kind at once, as `claim` would each (the result of
   * `shards[i]` at index i; `wanted` is asked per shard). A member claims every range it wants
   * in batches, so a provider whose store takes a batch answers thousands of claims (a member
   * starting alone: 16,384 per kind by default) with one call. A rejection fails every claim of
   * the batch (each is retried).
   */
  claimMany?(
    kind: string,
    shards: readonly number[],
    wanted?: (shard: number) => boolean,
  ): Promise<ClaimResult[]>;
  /**
   * Optional: `release` of several claims of one kind at once. A rejection counts every release
   * of the batch as failed: each is retried (a release whose epoch is no longer current is a
   * no-op, so one that was applied is harmless to repeat).
   */
  releaseMany?(kind: string, releases: readonly ReleaseRequest[]): Promise<void>;
  /** Called whenever any claim disappears, so a waiting owner can claim at once. */
  onClaimReleased(listener: (e: ClaimReleased) => void): () => void;
  /** Lease health changes; returns an unsubscribe function. */
  onLeaseHealth(listener: (e: LeaseHealth) => void): () => void;
  /**
   * O(1) and synchronous: true only while the member can prove its registration is alive. A
   * provider that finds it false starts its lease-lost path (once).
   */
  leaseValid(): boolean;
  /**
   * The claims the store holds under this member's current registration (optional: providers
   * whose replies cannot be lost need no audit). Used to find claims this member holds without
   * knowing it, and claims it believes it holds that are gone.
   */
  heldClaims?(): Promise<HeldClaims>;
  /**
   * Deletes the claim of (kind, shard) only if it carries this member's current registration
   * (a claim found by the audit that this member does not want). Optional, with heldClaims.
   */
  releaseStray?(kind: string, shard: number): Promise<void>;
  /**
   * Asks `member` to check its claims against what it holds (it holds a claim another member
   * waits for, longer than one retry period, although it is not that shard's desired owner).
   * Optional, with heldClaims.
   */
  askToLetGo?(member: string): void;
  /** Called when another member asks this one to check its claims; returns an unsubscribe. */
  onLetGoAsked?(listener: (from: string) => void): () => void;
}

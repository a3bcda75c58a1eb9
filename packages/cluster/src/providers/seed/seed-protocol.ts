import type { MemberStatus, Topology } from '../../membership/topology';
import type { KindShards } from '../../placement/kind-ranges';

/**
 * The SeedProvider protocol: plain JSON messages (the remote transport sends plain data as JSON)
 * between a member's provider and the seed's table actor. Requests expect a reply.
 */
export type SeedRequest =
  | {
      t: 'seed.join';
      cluster: string;
      id: string;
      address: string;
      kinds: string[];
      kindShards?: Record<string, KindShards> | undefined;
      status: MemberStatus;
      /** The member's listener actor, which receives topology and claim-release pushes. */
      listener: { address: string; id: string };
    }
  | { t: 'seed.heartbeat'; leaseId: number; version: number }
  | { t: 'seed.status'; leaseId: number; status: MemberStatus }
  /** Claims issued together, answered together (a join claims thousands of ranges). */
  | { t: 'seed.claims'; leaseId: number; items: Array<[kind: string, shard: number]> }
  | { t: 'seed.releases'; items: Array<[kind: string, shard: number, epoch: number]> }
  | { t: 'seed.leave'; leaseId: number };

/**
 * Reply to seed.join. `held`: the id is a live member's at another address (a second process
 * with this id, or the previous one restarted within its TTL); the join may pass once that
 * member leaves or its lease expires, so the joiner waits, as with etcd's member key.
 */
export type SeedJoinReply =
  | { ok: true; leaseId: number; incarnation: number; ttlMs: number; topology: Topology }
  | { ok: false; error: string; held?: boolean };

/** Reply to seed.heartbeat / seed.status / seed.leave: `alive` false means the lease expired. */
export interface SeedHeartbeatReply {
  alive: boolean;
  /** Sent when the member's version is behind (a push was lost). */
  topology?: Topology | undefined;
}

/** The result of one claim. */
export type SeedClaimReply = { epoch: number } | { heldBy: string } | { lost: true };

/** Reply to seed.claims: one result per item, in order. */
export interface SeedClaimsReply {
  results: SeedClaimReply[];
}

/** Most items per seed.claims / seed.releases request (and per seed.released push). */
export const SEED_BATCH_MAX = 512;

/** Pushed by the seed to every member's listener. */
export type SeedPush =
  | { t: 'seed.topology'; topology: Topology }
  /** Claims that disappeared, pushed together. */
  | { t: 'seed.released'; items: Array<[kind: string, shard: number, epoch: number]> };

/** Name of the table actor on the seed node. */
export const SEED_ACTOR_NAME = '$granary-seed';

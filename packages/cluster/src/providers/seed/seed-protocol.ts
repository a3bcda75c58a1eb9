import type { MemberStatus, Topology } from '../../membership/topology';

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
      status: MemberStatus;
      /** The member's listener actor, which receives topology and claim-release pushes. */
      listener: { address: string; id: string };
    }
  | { t: 'seed.heartbeat'; leaseId: number; version: number }
  | { t: 'seed.status'; leaseId: number; status: MemberStatus }
  | { t: 'seed.claim'; leaseId: number; kind: string; shard: number }
  | { t: 'seed.release'; kind: string; shard: number; epoch: number }
  | { t: 'seed.leave'; leaseId: number };

/** Reply to seed.join. */
export type SeedJoinReply =
  | { ok: true; leaseId: number; incarnation: number; ttlMs: number; topology: Topology }
  | { ok: false; error: string };

/** Reply to seed.heartbeat / seed.status / seed.leave: `alive` false means the lease expired. */
export interface SeedHeartbeatReply {
  alive: boolean;
  /** Sent when the member's version is behind (a push was lost). */
  topology?: Topology | undefined;
}

/** Reply to seed.claim. */
export type SeedClaimReply = { epoch: number } | { heldBy: string } | { lost: true };

/** Pushed by the seed to every member's listener. */
export type SeedPush =
  | { t: 'seed.topology'; topology: Topology }
  | { t: 'seed.released'; kind: string; shard: number; epoch: number };

/** Name of the table actor on the seed node. */
export const SEED_ACTOR_NAME = '$granary-seed';

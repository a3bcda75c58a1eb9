import type { KindShards } from '../placement/kind-ranges';

/** Where a member is in its life: placement only uses members that are `up`. */
export type MemberStatus = 'joining' | 'up' | 'leaving';

/** One node of the cluster as every member sees it. */
export interface Member {
  /** Stable id chosen by the node; the same across restarts if the node wants its shards back. */
  id: string;
  /** Remote address (`host:port`) other members send to. */
  address: string;
  /** Kinds this member hosts. */
  kinds: string[];
  /**
   * Grows each time the member (re-)registers: a member that lost its lease comes back with a
   * higher incarnation, so stale messages from the old one can be told apart.
   */
  incarnation: number;
  /** Lifecycle status. */
  status: MemberStatus;
  /**
   * How each hosted kind's shards are cut into claim ranges (hosts of a kind must agree: a member
   * that disagrees is refused at join). Absent for members that did not say.
   */
  kindShards?: Readonly<Record<string, KindShards>> | undefined;
}

/** An immutable snapshot of the membership; a new object for every change. */
export interface Topology {
  /** Only grows; members that saw the same changes report the same version. */
  version: number;
  /** Members sorted by id. */
  members: readonly Member[];
}

/** The topology before anything is known. */
export const EMPTY_TOPOLOGY: Topology = Object.freeze({ version: 0, members: Object.freeze([]) });

/** The members sorted by id, the order every topology snapshot uses. */
export function sortMembers(members: Iterable<Member>): Member[] {
  return [...members].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

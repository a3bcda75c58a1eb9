import { SYSTEM_CLOCK, type Clock } from '@granary/core';
import { Listeners } from '../../internal/listeners';
import { EMPTY_TOPOLOGY, sortMembers, type Member, type Topology } from '../../membership/topology';
import type { ClaimReleased, ClaimResult } from '../cluster-provider';

interface Lease {
  id: number;
  memberId: string;
  ttlMs: number;
  /** The expiry timer (the clock's handle). */
  timer: unknown;
}

interface Claim {
  memberId: string;
  leaseId: number;
  epoch: number;
}

/**
 * The shared membership table of MemoryProvider: what etcd is to EtcdProvider, in one process.
 * Members and claims hang off leases that expire unless kept alive; every change bumps one
 * revision counter, which serves as epoch (claims), incarnation (members) and topology version.
 * Listeners are called from a microtask, never inside the mutating call, like a watch.
 */
export class MemoryClusterTable {
  private revision: number;
  private readonly leases = new Map<number, Lease>();
  private readonly members = new Map<string, { member: Member; leaseId: number }>();
  /** Claims by kind, then shard (no key string per claim: a member holds 16,384 per kind). */
  private readonly claims = new Map<string, Map<number, Claim>>();
  /**
   * Claim disappearances not yet told to the listeners: those of one turn go out in one
   * microtask (in order with topology snapshots: a snapshot starts a new batch).
   */
  private released: ClaimReleased[] | undefined;
  private snapshot: Topology = EMPTY_TOPOLOGY;
  private readonly topologyListeners = new Listeners<Topology>();
  private readonly releaseListeners = new Listeners<ClaimReleased>();

  /**
   * @param initialRevision where the revision counter starts. A table that replaces an earlier
   *   one (a restarted seed) starts above everything the old one handed out, so epochs,
   *   incarnations and topology versions keep growing.
   * @param clock what lease expiry is timed on: the real clock, or a simulation's (give its
   *   members' actor systems the same one).
   */
  constructor(
    initialRevision = 0,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {
    this.revision = initialRevision;
  }

  /** The timer that revokes a lease `ttlMs` from now (it does not keep the process alive). */
  private expiry(leaseId: number, ttlMs: number): unknown {
    const timer = this.clock.setTimer(() => this.revokeLease(leaseId), ttlMs);
    (timer as { unref?: () => void } | null)?.unref?.();
    return timer;
  }

  /** Current topology snapshot. */
  topology(): Topology {
    return this.snapshot;
  }

  /** Grants a lease that expires `ttlMs` after the last keep-alive. */
  grantLease(memberId: string, ttlMs: number): number {
    const id = ++this.revision;
    this.leases.set(id, { id, memberId, ttlMs, timer: this.expiry(id, ttlMs) });
    return id;
  }

  /** Refreshes a lease; false if it has already expired or was revoked. */
  keepAlive(leaseId: number): boolean {
    const lease = this.leases.get(leaseId);
    if (!lease) return false;
    this.clock.clearTimer(lease.timer);
    lease.timer = this.expiry(leaseId, lease.ttlMs);
    return true;
  }

  /** True while the lease exists. */
  hasLease(leaseId: number): boolean {
    return this.leases.has(leaseId);
  }

  /** The member registered on a lease, if any. */
  memberOfLease(leaseId: number): Member | undefined {
    const lease = this.leases.get(leaseId);
    const entry = lease && this.members.get(lease.memberId);
    return entry && entry.leaseId === leaseId ? entry.member : undefined;
  }

  /** Removes a lease with its member and every claim attached to it. */
  revokeLease(leaseId: number): void {
    const lease = this.leases.get(leaseId);
    if (!lease) return;
    this.clock.clearTimer(lease.timer);
    this.leases.delete(leaseId);
    for (const [kind, byShard] of this.claims) {
      for (const [shard, claim] of byShard) {
        if (claim.leaseId === leaseId) this.dropClaim(kind, shard, claim);
      }
    }
    const entry = this.members.get(lease.memberId);
    if (entry && entry.leaseId === leaseId) {
      this.members.delete(lease.memberId);
      // A change of its own: without it, a member that held no claims (a client member) left
      // with the version of its join or last status, and every member ignored the topology
      // without it as not newer.
      this.revision++;
      this.publishTopology();
    }
  }

  /** Test hook: expires the lease of a member at once, as if its keep-alives had stopped. */
  expireMember(memberId: string): void {
    const entry = this.members.get(memberId);
    if (entry) this.revokeLease(entry.leaseId);
  }

  /** Creates or updates a member attached to a lease; returns its incarnation. */
  putMember(leaseId: number, member: Omit<Member, 'incarnation'>): number {
    if (!this.leases.has(leaseId)) return 0;
    const prev = this.members.get(member.id);
    const revision = ++this.revision;
    const incarnation = prev && prev.leaseId === leaseId ? prev.member.incarnation : revision;
    this.members.set(member.id, { member: { ...member, incarnation }, leaseId });
    this.publishTopology();
    return incarnation;
  }

  /** Creates the claim if absent. */
  claim(
    kind: string,
    shard: number,
    memberId: string,
    leaseId: number,
  ): Exclude<ClaimResult, { abandoned: true }> | undefined {
    if (!this.leases.has(leaseId)) return undefined;
    let byShard = this.claims.get(kind);
    if (byShard === undefined) this.claims.set(kind, (byShard = new Map()));
    const held = byShard.get(shard);
    if (held) return held.leaseId === leaseId ? { epoch: held.epoch } : { heldBy: held.memberId };
    const epoch = ++this.revision;
    byShard.set(shard, { memberId, leaseId, epoch });
    return { epoch };
  }

  /** Deletes the claim only if `epoch` is its current epoch. */
  release(kind: string, shard: number, epoch: number): void {
    const claim = this.claims.get(kind)?.get(shard);
    if (claim && claim.epoch === epoch) this.dropClaim(kind, shard, claim);
  }

  /** The holder and epoch of a shard's claim, if any (tests and tooling). */
  claimOf(kind: string, shard: number): { memberId: string; epoch: number } | undefined {
    const claim = this.claims.get(kind)?.get(shard);
    return claim && { memberId: claim.memberId, epoch: claim.epoch };
  }

  /** Subscribes to topology snapshots. */
  onTopology(listener: (t: Topology) => void): () => void {
    return this.topologyListeners.add(listener);
  }

  /** Subscribes to claim disappearances. */
  onClaimReleased(listener: (e: ClaimReleased) => void): () => void {
    return this.releaseListeners.add(listener);
  }

  private dropClaim(kind: string, shard: number, claim: Claim): void {
    this.claims.get(kind)?.delete(shard);
    this.revision++;
    if (this.released === undefined) {
      const batch: ClaimReleased[] = (this.released = []);
      queueMicrotask(() => {
        if (this.released === batch) this.released = undefined;
        for (const e of batch) this.releaseListeners.emit(e);
      });
    }
    this.released.push({ kind, shard, epoch: claim.epoch });
  }

  private publishTopology(): void {
    const snapshot: Topology = Object.freeze({
      version: this.revision,
      members: Object.freeze(sortMembers([...this.members.values()].map((e) => e.member))),
    });
    this.snapshot = snapshot;
    this.released = undefined; // later drops are told after this snapshot, as they happened
    queueMicrotask(() => this.topologyListeners.emit(snapshot));
  }
}

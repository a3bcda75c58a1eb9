import type { GrainStatsSnapshot } from './grains/grain-stats';
import type { HostedGrains, LocalActivation } from './grains/hosted-grains';
import type { Member, MemberStatus, Topology } from './membership/topology';
import type {
  LoadedReminders,
  ReminderCursor,
  ReminderSummary,
} from './reminders/reminder-service';
import type { ReminderStats } from './reminders/reminder-stats';

/** What one member says about itself (the admin API's per-member answer). */
export interface MemberReport {
  id: string;
  address: string;
  /** Kinds this member hosts. */
  kinds: string[];
  /** Its status in its own topology; `stopping`/`stopped` once it left or is leaving. */
  status: MemberStatus | 'starting' | 'stopping' | 'stopped';
  incarnation: number | undefined;
  /** The membership lease: valid now, and for how long it has been in that state (ms). */
  lease: { valid: boolean; fenced: boolean; sinceMs: number };
  /** Milliseconds since Cluster.start returned. */
  uptimeMs: number;
  /** The topology version this member follows. */
  topologyVersion: number;
  /** Live activations per hosted kind. */
  activations: Record<string, number>;
  /** The shards this member holds, with the epoch of each claim. */
  shards: Array<{ kind: string; shard: number; epoch: number }>;
  /** Shards each hosted kind has. */
  shardCounts: Record<string, number>;
}

/** Where a grain lives, as its owner member sees it. */
export interface GrainLocation {
  kind: string;
  identity: string;
  shard: number;
  /** The member holding the shard's claim (this one) and its epoch, if it does. */
  epoch: number | undefined;
  /** The live activation on this member, if any. */
  activation: LocalActivation | undefined;
}

/** What ClusterIntrospection reads of its Cluster. */
export interface IntrospectedCluster {
  readonly id: string;
  readonly address: string;
  readonly topology: Topology;
  readonly self: Member | undefined;
  running(): 'starting' | 'running' | 'stopping' | 'stopped';
  leaseValid(): boolean;
  fenced(): boolean;
  shardCountOf(kind: string): number;
  shardOf(kind: string, identity: string): number;
  epochOf(kind: string, shard: number): number | undefined;
  heldShards(kind: string): number[];
  now(): number;
  /** The member's reminders per kind and its counters (undefined without `reminders`). */
  reminders(): { kinds: ReminderSummary[]; stats: ReminderStats } | undefined;
  /** Up to `limit` reminders of `kind` loaded here (undefined without `reminders`). */
  loadedReminders(kind: string, limit: number, after?: ReminderCursor): LoadedReminders | undefined;
}

/**
 * Read-only views of one member and the few operator actions (deactivate a grain), for the
 * admin API (`@granary/admin`) and tests. Nothing here is on the call path; served-turn
 * statistics are off until `enableStats()`.
 */
export class ClusterIntrospection {
  private leaseSince: number;
  private lastLease = true;
  private readonly startedAt: number;

  constructor(
    private readonly cluster: IntrospectedCluster,
    private readonly hosted: HostedGrains,
  ) {
    this.startedAt = this.leaseSince = cluster.now();
  }

  /** This member's own report: status, lease, shards and epochs, activation counts. */
  report(): MemberReport {
    const c = this.cluster;
    const valid = c.leaseValid();
    const now = c.now();
    if (valid !== this.lastLease) {
      this.lastLease = valid;
      this.leaseSince = now;
    }
    const kinds = this.hosted.kinds();
    const running = c.running();
    const self = c.self;
    const shards: MemberReport['shards'] = [];
    const activations: Record<string, number> = {};
    const shardCounts: Record<string, number> = {};
    for (const kind of kinds) {
      activations[kind] = this.hosted.activationCount(kind);
      shardCounts[kind] = c.shardCountOf(kind);
      for (const shard of c.heldShards(kind)) {
        const epoch = c.epochOf(kind, shard);
        if (epoch !== undefined) shards.push({ kind, shard, epoch });
      }
    }
    return {
      id: c.id,
      address: c.address,
      kinds,
      status: running === 'running' ? (self?.status ?? 'joining') : running,
      incarnation: self?.incarnation,
      lease: { valid, fenced: c.fenced(), sinceMs: now - this.leaseSince },
      uptimeMs: now - this.startedAt,
      topologyVersion: c.topology.version,
      activations,
      shards,
      shardCounts,
    };
  }

  /** Where `kind/identity` lives as far as this member knows (its claim, its activation). */
  locate(kind: string, identity: string): GrainLocation {
    const c = this.cluster;
    const shard = c.shardOf(kind, identity);
    return {
      kind,
      identity,
      shard,
      epoch: c.epochOf(kind, shard),
      activation: this.hosted.locate(kind, identity),
    };
  }

  /** Up to `limit` live activations of `kind` here (for small kinds: pool workers). */
  activations(kind: string, limit = 1000): Array<LocalActivation & { identity: string }> {
    return this.hosted.list(kind, limit);
  }

  /** Asks this member's activation of `kind/identity` to end; false when there is none. */
  deactivate(kind: string, identity: string): boolean {
    return this.hosted.deactivate(kind, identity);
  }

  /**
   * The reminders and jobs this member has loaded (the shards it owns), per kind with the
   * earliest next due, and its reminder counters; undefined when started without `reminders`.
   */
  reminders(): { kinds: ReminderSummary[]; stats: ReminderStats } | undefined {
    return this.cluster.reminders();
  }

  /**
   * Up to `limit` of the reminders and jobs of `kind` this member has loaded (the shards of it
   * it owns), by identity then name (after `after`, the last one of a previous page, when
   * given), with the shards they come from; undefined when started
   * without `reminders`. From memory: listing a kind's reminders asks every member for this, as
   * no store call enumerates a kind (the store is keyed by shard; loading a shard fences it).
   */
  loadedReminders(
    kind: string,
    limit: number,
    after?: ReminderCursor,
  ): LoadedReminders | undefined {
    return this.cluster.loadedReminders(kind, limit, after);
  }

  /** Starts counting served turns (totals, errors, latency, hot grains) per hosted kind. */
  enableStats(): void {
    this.hosted.enableStats();
  }

  /** Served-turn statistics per hosted kind (empty until enableStats). */
  stats(top = 10, by: 'calls' | 'time' = 'calls'): GrainStatsSnapshot[] {
    return this.hosted.stats(top, by);
  }
}

import type { ShardReleased } from '../membership/cluster-events';
import type { ShardGate } from '../membership/fencing';
import { Activator } from './activator';
import type { DeactivationReason } from './grain';
import { GrainRouter } from './grain-router';
import { KindStats, type GrainStatsSnapshot } from './grain-stats';
import { grainPrefixOf } from './internal/call-headers';
import type { GrainServices } from './internal/grain-services';
import type { KindDefinition } from './kind';
import { fnv1a32, shardOf } from '../placement/shard-of';
import type { KindCounters } from '../telemetry/cluster-metrics';

/** How long a non-graceful stop waits for activations to run onDeactivate. */
const FORCED_STOP_WAIT_MS = 2000;

/** A kind this member hosts, as Cluster builds it. */
export interface HostedKind {
  readonly def: KindDefinition;
  readonly shardCount: number;
  /** The kind's shard gate, from shard ownership. */
  readonly gate: ShardGate;
}

/**
 * The grain kinds this member hosts: per kind, its activator (activation table, passivation,
 * drain) and its router, registered in the actor system for the kind's grain ids. The Cluster
 * builds it with itself and tells it about shard moves.
 */
export class HostedGrains {
  private readonly activators = new Map<string, Activator>();
  private readonly routers: GrainRouter[] = [];

  constructor(
    private readonly services: GrainServices,
    kinds: ReadonlyArray<HostedKind>,
  ) {
    const registry = services.system.registry;
    try {
      for (const k of kinds) {
        const activator = new Activator(k.def, k.shardCount, k.gate, services);
        const router = new GrainRouter(activator, grainPrefixOf(k.def.name), registry);
        registry.addPrefix(router.prefix, router);
        this.routers.push(router);
        this.activators.set(k.def.name, activator);
      }
    } catch (err) {
      this.close();
      throw err;
    }
  }

  /** Live activations on this member, of one kind or all. */
  activationCount(kind?: string): number {
    let n = 0;
    for (const a of this.activators.values()) {
      if (kind === undefined || a.def.name === kind) n += a.table.count;
    }
    return n;
  }

  /** Each hosted kind's counters (the metrics read them at each collection). */
  kindCounters(): Array<[string, KindCounters]> {
    return [...this.activators.values()].map((a) => [
      a.def.name,
      {
        active: a.table.count,
        queued: a.queued,
        mailboxRejections: a.mailboxRejections,
        longTurns: a.longTurns,
        timedOutTurns: a.timedOutTurns,
        deactivations: a.deactivations,
        hasState: a.def.state !== undefined,
      },
    ]);
  }

  /** Long and timed-out turns on this member since start (of one kind, or all). */
  turnStats(kind?: string): TurnStats {
    const stats: TurnStats = { longTurns: 0, timedOutTurns: 0 };
    for (const a of this.activators.values()) {
      if (kind !== undefined && a.def.name !== kind) continue;
      stats.longTurns += a.longTurns;
      stats.timedOutTurns += a.timedOutTurns;
    }
    return stats;
  }

  /** Names of the kinds hosted here. */
  kinds(): string[] {
    return [...this.activators.keys()];
  }

  /** The live activation of `kind/identity` on this member, described; undefined if none. */
  locate(kind: string, identity: string): LocalActivation | undefined {
    const a = this.activators.get(kind);
    if (a === undefined) return undefined;
    const shard = shardOf(identity, a.shardCount);
    const found = a.table.get(shard, fnv1a32(identity), identity, 0);
    if (found === undefined) return undefined;
    const idle =
      found.inflight > 0
        ? 0
        : Math.ceil(this.services.system.clock.monotonic()) - found.lastActivity;
    return {
      activationId: found.id,
      state: found.state,
      mailboxDepth: found.inflight,
      idleMs: Math.max(0, idle),
    };
  }

  /** Up to `limit` live activations of `kind` on this member, described, with identities. */
  list(kind: string, limit: number): Array<LocalActivation & { identity: string }> {
    const a = this.activators.get(kind);
    const out: Array<LocalActivation & { identity: string }> = [];
    if (a === undefined) return out;
    for (let s = 0; s < a.shardCount && out.length < limit; s++) {
      for (const e of a.table.inShard(s)) {
        if (out.length >= limit) break;
        out.push({ identity: e.identity, ...this.locate(kind, e.identity)! });
      }
    }
    return out;
  }

  /** Asks the live activation of `kind/identity` to end (reason `requested`); false if none. */
  deactivate(kind: string, identity: string): boolean {
    const a = this.activators.get(kind);
    if (a === undefined) return false;
    const found = a.table.get(shardOf(identity, a.shardCount), fnv1a32(identity), identity, 0);
    if (found === undefined || found.state !== 'active') return false;
    a.requestDeactivate(found, 'requested');
    return true;
  }

  /** Starts counting served turns per kind (idempotent; nothing is counted before). */
  enableStats(): void {
    for (const a of this.activators.values()) a.stats ??= new KindStats(a.def.name);
  }

  /** Each hosted kind's served-turn statistics, with its `top` hottest grains (enabled ones). */
  stats(top = 10, by: 'calls' | 'time' = 'calls'): GrainStatsSnapshot[] {
    const out: GrainStatsSnapshot[] = [];
    for (const a of this.activators.values()) if (a.stats) out.push(a.stats.snapshot(top, by));
    return out;
  }

  /** Graceful leave began: no new activations on this member. */
  beginLeaving(): void {
    this.services.accepting = false;
  }

  /** The drain hook of a shard about to be released (rebalance or graceful leave). */
  drain(kind: string, shard: number): Promise<void> | undefined {
    const reason = this.services.accepting ? 'rebalance' : 'shutdown';
    return this.activators.get(kind)?.drain(shard, reason);
  }

  /** This member claimed the shard: activations may start in it again. */
  shardAcquired(kind: string, shard: number): void {
    const a = this.activators.get(kind);
    if (a !== undefined) a.draining[shard] = 0;
  }

  /** The claim is gone; fenced or vanished claims end the shard's activations at once. */
  shardReleased(e: ShardReleased): void {
    const a = this.activators.get(e.kind);
    if (a === undefined) return;
    a.draining[e.shard] = 0;
    if (e.reason === 'lease-lost' || e.reason === 'vanished') a.end(e.shard, 'not-owner');
  }

  /** Ends every remaining activation (after the shards were released, or on a forced stop). */
  async deactivateAll(reason: DeactivationReason): Promise<void> {
    this.services.accepting = false;
    const ending: Promise<void>[] = [];
    for (const a of this.activators.values()) {
      for (let s = 0; s < a.shardCount; s++) ending.push(...a.end(s, reason));
    }
    if (ending.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(ending),
      new Promise((resolve) => (timer = setTimeout(resolve, FORCED_STOP_WAIT_MS))),
    ]);
    clearTimeout(timer);
  }

  /** Unregisters the routers: calls arriving later are dead letters, which callers retry. */
  close(): void {
    this.services.accepting = false;
    const registry = this.services.system.registry;
    for (const router of this.routers.splice(0)) {
      registry.removePrefix(router.prefix);
      router.dead = true;
    }
  }
}

/** A live activation as `HostedGrains.locate` describes it. */
export interface LocalActivation {
  activationId: string;
  state: 'active' | 'deactivating';
  /** Messages posted to it and not finished (queued plus the running turn). */
  mailboxDepth: number;
  /** Milliseconds since its last turn ended (0 while it has work). */
  idleMs: number;
}

/** Counts of `Cluster.turnStats`. */
export interface TurnStats {
  /** Turns that ran longer than their kind's longTurnMs (each logged once per activation). */
  longTurns: number;
  /** Turns found stuck past their kind's turnTimeoutMs (their queued calls failed). */
  timedOutTurns: number;
}

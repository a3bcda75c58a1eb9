import { PID, Props, type ActorSystem, type Context } from '@granary/core';
import type { ClusterLogger } from '../../internal/logger';
import { MemoryClusterTable } from '../memory/memory-table';
import {
  SEED_ACTOR_NAME,
  type SeedClaimReply,
  type SeedHeartbeatReply,
  type SeedJoinReply,
  type SeedPush,
  type SeedRequest,
} from './seed-protocol';

/**
 * The membership table of a seed-provider cluster, as an actor on the seed node: a
 * MemoryClusterTable (leases that expire after `ttlMs` without a heartbeat, claims on leases,
 * epochs from one revision counter) behind the seed protocol, pushing every topology change and
 * claim release to each member's listener. One actor turn per request, so no locking is needed.
 */
export class SeedTable {
  /**
   * Revisions start at the current time in microseconds: a restarted seed hands out epochs,
   * incarnations and versions above those of the seed before it (it would have needed more than
   * one change per microsecond of its life to get ahead), so state fencing keeps working.
   */
  private readonly table = new MemoryClusterTable(Date.now() * 1000);
  private readonly listeners = new Map<number, PID>();
  private readonly pid: PID;

  constructor(
    private readonly system: ActorSystem,
    private readonly cluster: string,
    private readonly ttlMs: number,
    private readonly logger: ClusterLogger,
  ) {
    this.pid = system.root.spawnNamed(
      Props.fromFunc((ctx) => this.receive(ctx)),
      SEED_ACTOR_NAME,
    );
    this.table.onTopology((topology) => this.push({ t: 'seed.topology', topology }));
    this.table.onClaimReleased((e) => this.push({ t: 'seed.released', ...e }));
  }

  /** Stops the actor; members lose their leases when their heartbeats go unanswered. */
  stop(): void {
    this.system.root.stop(this.pid);
  }

  private receive(ctx: Context): void {
    const m = ctx.message as SeedRequest;
    if (
      typeof m !== 'object' ||
      m === null ||
      typeof m.t !== 'string' ||
      !m.t.startsWith('seed.')
    ) {
      return; // lifecycle messages
    }
    switch (m.t) {
      case 'seed.join':
        ctx.respond(this.join(m));
        return;
      case 'seed.heartbeat': {
        const alive = this.table.keepAlive(m.leaseId);
        const t = this.table.topology();
        const reply: SeedHeartbeatReply = {
          alive,
          topology: m.version < t.version ? t : undefined,
        };
        ctx.respond(reply);
        return;
      }
      case 'seed.status': {
        const member = this.memberOf(m.leaseId);
        if (member) this.table.putMember(m.leaseId, { ...member, status: m.status });
        ctx.respond({ alive: member !== undefined } satisfies SeedHeartbeatReply);
        return;
      }
      case 'seed.claim': {
        const member = this.memberOf(m.leaseId);
        const result = member && this.table.claim(m.kind, m.shard, member.id, m.leaseId);
        ctx.respond((result ?? { lost: true }) satisfies SeedClaimReply);
        return;
      }
      case 'seed.release':
        this.table.release(m.kind, m.shard, m.epoch);
        ctx.respond({ alive: true } satisfies SeedHeartbeatReply);
        return;
      case 'seed.leave':
        this.table.revokeLease(m.leaseId);
        ctx.respond({ alive: false } satisfies SeedHeartbeatReply);
        return;
    }
  }

  private join(m: Extract<SeedRequest, { t: 'seed.join' }>): SeedJoinReply {
    if (m.cluster !== this.cluster) {
      return { ok: false, error: `the seed serves cluster '${this.cluster}', not '${m.cluster}'` };
    }
    const leaseId = this.table.grantLease(m.id, this.ttlMs);
    const incarnation = this.table.putMember(leaseId, {
      id: m.id,
      address: m.address,
      kinds: m.kinds,
      status: m.status,
    });
    this.listeners.set(leaseId, new PID(m.listener.address, m.listener.id));
    this.logger.info({ member: m.id, address: m.address, incarnation }, 'seed: member joined');
    return { ok: true, leaseId, incarnation, ttlMs: this.ttlMs, topology: this.table.topology() };
  }

  private memberOf(leaseId: number): { id: string; address: string; kinds: string[] } | undefined {
    if (!this.table.hasLease(leaseId)) return undefined;
    return this.table.memberOfLease(leaseId);
  }

  private push(message: SeedPush): void {
    for (const [leaseId, pid] of this.listeners) {
      if (!this.table.hasLease(leaseId)) {
        this.listeners.delete(leaseId);
        continue;
      }
      this.system.root.send(pid, message);
    }
  }
}

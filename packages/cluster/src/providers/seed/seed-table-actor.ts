import { PID, Props, type ActorSystem, type Context } from '@granary/core';
import { peerAddressOf } from '@granary/core/internal';
import { SeedRequestRefusedError } from '../../errors';
import type { ClusterLogger } from '../../internal/logger';
import type { Member } from '../../membership/topology';
import { MAX_SHARD_COUNT } from '../../placement/kind-ranges';
import { MemoryClusterTable } from '../memory/memory-table';
import {
  SEED_ACTOR_NAME,
  type SeedClaimReply,
  type SeedClaimsReply,
  SEED_BATCH_MAX,
  type SeedHeartbeatReply,
  type SeedJoinReply,
  type SeedPush,
  type SeedRequest,
} from './seed-protocol';
import { looksLikeSeedRequest, seedRequestProblem } from './seed-request-check';

/** At most this many refused seed requests are logged per REFUSAL_LOG_MS; all are answered. */
const REFUSAL_LOG_LIMIT = 5;
const REFUSAL_LOG_MS = 10_000;

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
  private refusals = 0;
  private refusalWindow = 0;

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
    this.table.onClaimReleased((e) => this.pushReleased([e.kind, e.shard, e.epoch]));
  }

  /** Releases of one turn are pushed together, at most SEED_BATCH_MAX per message. */
  private released: Array<[string, number, number]> = [];

  private pushReleased(item: [string, number, number]): void {
    if (this.released.push(item) > 1) return;
    setImmediate(() => {
      const all = this.released;
      this.released = [];
      for (let i = 0; i < all.length; i += SEED_BATCH_MAX) {
        this.push({ t: 'seed.released', items: all.slice(i, i + SEED_BATCH_MAX) });
      }
    });
  }

  /** Stops the actor; members lose their leases when their heartbeats go unanswered. */
  stop(): void {
    this.system.root.stop(this.pid);
  }

  private receive(ctx: Context): void {
    if (!looksLikeSeedRequest(ctx.message)) return; // lifecycle messages
    const problem = seedRequestProblem(ctx.message);
    if (problem !== undefined) return this.refuse(ctx, problem);
    const m = ctx.message as SeedRequest;
    const from = this.senderAddress(ctx);
    const denied = this.deniedTo(m, from);
    if (denied !== undefined) return this.refuse(ctx, denied);
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
      case 'seed.claims': {
        const member = this.memberOf(m.leaseId);
        const results = m.items.map(
          ([kind, shard]): SeedClaimReply =>
            (member && this.table.claim(kind, shard, member.id, m.leaseId)) || { lost: true },
        );
        ctx.respond({ results } satisfies SeedClaimsReply);
        return;
      }
      case 'seed.releases':
        for (const [kind, shard, epoch] of m.items) this.table.release(kind, shard, epoch);
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
    // Another process under a live member's id would take over its record (and the seed's own).
    const holder = this.table.topology().members.find((x) => x.id === m.id);
    if (holder !== undefined && holder.address !== m.address) {
      return {
        ok: false,
        held: true,
        error:
          `member id '${m.id}' is in use by the live member at ${holder.address} (another ` +
          'process with this id, or a previous one whose lease has not expired yet): give each member its own id',
      };
    }
    const leaseId = this.table.grantLease(m.id, this.ttlMs);
    const incarnation = this.table.putMember(leaseId, {
      id: m.id,
      address: m.address,
      kinds: m.kinds,
      kindShards: m.kindShards,
      status: m.status,
    });
    this.listeners.set(leaseId, new PID(m.listener.address, m.listener.id));
    this.logger.info({ member: m.id, address: m.address, incarnation }, 'seed: member joined');
    return { ok: true, leaseId, incarnation, ttlMs: this.ttlMs, topology: this.table.topology() };
  }

  /**
   * The address the sender is proven to be at: the address its link authenticated with, or
   * this node's for a local sender; undefined without a sender.
   */
  private senderAddress(ctx: Context): string | undefined {
    const sender = ctx.sender;
    if (sender === undefined) return undefined;
    return (
      peerAddressOf(sender) ??
      (sender.address === this.system.address || sender.address === 'nonhost'
        ? this.system.address
        : undefined)
    );
  }

  /**
   * Why `from` may not make this request (undefined when it may): a member joins from the
   * address it registers (and listens there), and only that address acts on its lease and its
   * claims, so a peer cannot join as another node nor end another member's lease.
   */
  private deniedTo(m: SeedRequest, from: string | undefined): string | undefined {
    if (from === undefined) return 'a seed request needs a sender to answer';
    switch (m.t) {
      case 'seed.join':
        if (m.address !== from) return `a join for ${m.address} from ${from}`;
        if (m.listener.address !== from) return 'the listener must be at the joining address';
        return undefined;
      case 'seed.releases': {
        const members = this.table.topology().members;
        for (const [kind, shard] of m.items) {
          const claim = this.table.claimOf(kind, shard);
          if (claim === undefined) continue;
          const holder = members.find((x) => x.id === claim.memberId);
          if (holder !== undefined && holder.address !== from)
            return `a release of ${kind}/${shard}, held by another member`;
        }
        return undefined;
      }
      default: {
        const member = this.table.hasLease(m.leaseId)
          ? this.table.memberOfLease(m.leaseId)
          : undefined;
        if (member !== undefined && member.address !== from)
          return `lease ${m.leaseId} belongs to another member`;
        return m.t === 'seed.claims' && member !== undefined
          ? claimsDenied(member, m.items)
          : undefined;
      }
    }
  }

  /** Answers with a typed refusal (the peer hears why); logs a few per interval. */
  private refuse(ctx: Context, reason: string): void {
    const now = Date.now();
    if (now - this.refusalWindow >= REFUSAL_LOG_MS) {
      if (this.refusals > REFUSAL_LOG_LIMIT) {
        this.logger.warn(
          { count: this.refusals - REFUSAL_LOG_LIMIT },
          'seed: more refused requests were not logged one by one',
        );
      }
      this.refusalWindow = now;
      this.refusals = 0;
    }
    if (++this.refusals <= REFUSAL_LOG_LIMIT) {
      this.logger.warn({ sender: ctx.sender?.toString(), reason }, 'seed: request refused');
    }
    if (ctx.sender) ctx.respond(new SeedRequestRefusedError(reason));
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
      // Sent as the seed: a member takes pushes only from the seed it joined.
      this.system.root.send(pid, message, { sender: this.pid });
    }
  }
}

/**
 * Why a member may not make these claims (undefined when it may): only ranges of a kind it
 * hosts, below the range count it joined with. Otherwise one member could fill the seed's table
 * with claims of kinds nobody hosts, or of 2^31 ranges of one kind, at SEED_BATCH_MAX a request.
 */
function claimsDenied(member: Member, items: ReadonlyArray<[string, number]>): string | undefined {
  for (const [kind, range] of items) {
    if (!member.kinds.includes(kind))
      return `a claim of ${kind.slice(0, 64)}/${range}, a kind ${member.id} does not host`;
    const ranges = member.kindShards?.[kind]?.ranges ?? MAX_SHARD_COUNT;
    if (range >= ranges)
      return `a claim of ${kind.slice(0, 64)}/${range}: ${member.id} joined with ${ranges} ranges of it`;
  }
  return undefined;
}

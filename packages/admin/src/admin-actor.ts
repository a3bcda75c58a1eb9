import { DeadLetterEvent, LogThrottle, Props, type Context, type PID } from '@granary/core';
import { peerAddressOf } from '@granary/core/internal';
import type { Cluster } from '@granary/cluster';
import {
  ADMIN_ACTOR,
  parseAsk,
  type AdminAsk,
  type MemberLoadedReminders,
  type MemberPool,
  type MemberStats,
} from './admin-protocol';
import { AdminRequestRefusedError } from './errors';

/** Pool worker kinds are `<pool>@<member id>` (see @granary/pool's poolKind). */
const POOL_KIND_SEPARATOR = '@';
const MAX_POOL_WORKERS = 10_000;
/** Refused requests are logged at most once per this (a peer may send them in a loop). */
const REFUSAL_LOG_INTERVAL_MS = 10_000;

/** The `t` of a refused request, for its log line (clipped: a peer wrote it). */
function typeOfAsk(message: unknown): string {
  const t = (message as { t?: unknown }).t;
  return typeof t === 'string' ? t.slice(0, 64) : typeof t;
}

/**
 * The admin actor of one member (`$granary-admin`): answers the admin API of any member about
 * this one (its report, statistics, pools, where a grain lives here) and carries out operator
 * actions (deactivate a grain, drain this member). Requests are taken only from this member's
 * own process or a member of the current topology: the address the remote link authenticated
 * (not the one the sender PID states, which the peer wrote) must be a member's. A request
 * without a sender is refused too: it cannot be answered, and it cannot be told from a peer's.
 */
export class AdminActor {
  readonly pid: PID;
  private deadLetters = 0;
  /** Requests refused (malformed, no sender, not a member's). */
  refused = 0;
  private readonly unsubscribe: () => void;
  private readonly log: LogThrottle;

  constructor(
    private readonly cluster: Cluster,
    /** Starts this member's graceful leave (after the reply went out). */
    private readonly drain: () => void,
  ) {
    const system = cluster.system;
    this.log = new LogThrottle(
      system.logger.child({ component: 'admin' }),
      REFUSAL_LOG_INTERVAL_MS,
    );
    const sub = system.eventStream.subscribe(DeadLetterEvent, () => this.deadLetters++);
    this.unsubscribe = () => sub.unsubscribe();
    this.pid = system.root.spawnNamed(
      Props.fromFunc((ctx) => this.receive(ctx)),
      ADMIN_ACTOR,
    );
  }

  /** Answers a request of this member's own admin API without a message round trip. */
  answer(ask: AdminAsk): unknown {
    const i = this.cluster.introspect();
    switch (ask.t) {
      case 'admin.report':
        return i.report();
      case 'admin.stats':
        return this.stats(ask.top, ask.by);
      case 'admin.locate':
        return i.locate(ask.kind, ask.id);
      case 'admin.deactivate':
        return { deactivated: i.deactivate(ask.kind, ask.id) };
      case 'admin.pools':
        return this.pools();
      case 'admin.reminders':
        return { member: this.cluster.id, ...(i.reminders() ?? { kinds: [], stats: undefined }) };
      case 'admin.reminders.loaded':
        return {
          member: this.cluster.id,
          loaded: i.loadedReminders(ask.kind, ask.limit, ask.after) ?? null,
        } satisfies MemberLoadedReminders;
      case 'admin.drain':
        setImmediate(this.drain);
        return { draining: this.cluster.id };
    }
  }

  stop(): void {
    this.unsubscribe();
    this.cluster.system.root.stop(this.pid);
  }

  private receive(ctx: Context): void {
    const m = ctx.message;
    if (m === null || typeof m !== 'object' || !('t' in m)) return; // lifecycle messages
    const ask = parseAsk(m);
    if (ask === undefined) return this.refuse(ctx, 'malformed admin request');
    const sender = ctx.sender;
    if (sender === undefined) return this.refuse(ctx, 'an admin request must have a sender');
    // Undefined for a PID made in this process; else what the peer's handshake proved.
    const from = peerAddressOf(sender);
    if (from !== undefined && from !== this.cluster.address && !this.isMember(from)) {
      return this.refuse(ctx, `admin requests are taken from members only, not ${from}`);
    }
    ctx.respond(this.answer(ask));
  }

  private refuse(ctx: Context, reason: string): void {
    this.refused++;
    this.log.log(
      'refused',
      'warn',
      { reason, type: typeOfAsk(ctx.message) },
      'admin request refused',
    );
    if (ctx.sender !== undefined) ctx.respond(new AdminRequestRefusedError(reason));
  }

  private isMember(address: string): boolean {
    return this.cluster.topology.members.some((m) => m.address === address);
  }

  private stats(top: number, by: 'calls' | 'time'): MemberStats {
    return {
      member: this.cluster.id,
      at: Date.now(),
      kinds: this.cluster.introspect().stats(top, by),
      deadLetters: this.deadLetters,
    };
  }

  private pools(): MemberPool[] {
    const i = this.cluster.introspect();
    const suffix = POOL_KIND_SEPARATOR + this.cluster.id;
    const out: MemberPool[] = [];
    for (const kind of i.report().kinds) {
      if (!kind.endsWith(suffix) || kind.length === suffix.length) continue;
      const workers = i
        .activations(kind, MAX_POOL_WORKERS)
        .filter((a) => !a.identity.startsWith('$'))
        .map((a) => ({
          index: a.identity,
          activationId: a.activationId,
          inFlight: a.mailboxDepth,
          idleMs: a.idleMs,
        }));
      const inFlight = workers.reduce((n, w) => n + w.inFlight, 0);
      const busy = workers.filter((w) => w.inFlight > 0).length;
      out.push({
        pool: kind.slice(0, -suffix.length),
        member: this.cluster.id,
        workers,
        inFlight,
        saturation: workers.length === 0 ? 0 : busy / workers.length,
      });
    }
    return out;
  }
}

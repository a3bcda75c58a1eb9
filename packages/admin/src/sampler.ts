import { quantileOf, type Cluster, type MemberReport } from '@granary/cluster';
import type { AdminActor } from './admin-actor';
import type { MemberStats } from './admin-protocol';
import { askAll, type NotAnswering } from './fanout';
import { shardsView } from './views';

/** Above this many shards of a kind on one member, a sample carries the count, not the list. */
export const SHARD_LIST_LIMIT = 1024;
/** A sample lists at most this many moving shards (it counts them all). */
export const MOVING_LIMIT = 256;

/** One second of the cluster, as the dashboard and `granary watch` show it. */
export interface Sample {
  /** Wall clock (ms) of the sample. */
  t: number;
  topologyVersion: number;
  members: Array<{
    id: string;
    status: string;
    answered: boolean;
    activations: number;
    /**
     * kind → the shards it holds, or only how many when that is more than SHARD_LIST_LIMIT (a
     * kind of 16,384 shards: a sample per second must stay small, and so must the page).
     */
    shards: Record<string, number[] | number>;
  }>;
  /** Live activations per kind. */
  activations: Record<string, number>;
  /** Served grain calls (turns) per second, their p50/p99 in ms, errors per second by name. */
  calls: {
    rate: number;
    p50: number | null;
    p99: number | null;
    failedRate: number;
    errors: Record<string, number>;
  };
  activatedRate: number;
  deactivatedRate: number;
  deadLettersRate: number;
  /** Shards whose holder is not the desired owner (moving), by kind: the first MOVING_LIMIT. */
  moving: Array<{ kind: string; shard: number; owner: string | null; desiredOwner: string | null }>;
  /** How many shards are moving in all (`moving` lists at most MOVING_LIMIT of them). */
  movingTotal: number;
  top: Array<{ kind: string; identity: string; member: string; calls: number }>;
  notAnswering: NotAnswering[];
}

/**
 * Samples the whole cluster once per interval while anyone listens (server-sent events), and
 * keeps the last `historySize` samples for new listeners. Rates are per member differences of
 * cumulative counters, so a sample missed or a member restarted only shortens one window.
 */
export class Sampler {
  private readonly listeners = new Set<(s: Sample) => void>();
  private readonly history: Sample[] = [];
  private readonly previous = new Map<string, MemberStats>();
  private timer: NodeJS.Timeout | undefined = undefined;
  private busy = false;

  constructor(
    private readonly cluster: Cluster,
    private readonly actor: AdminActor,
    private readonly intervalMs: number,
    private readonly timeoutMs: number,
    private readonly historySize = 300,
  ) {}

  /** Adds a listener (it gets the history first); returns the function that removes it. */
  listen(listener: (s: Sample) => void): () => void {
    for (const s of this.history) listener(s);
    this.listeners.add(listener);
    this.timer ??= setInterval(() => void this.tick(), this.intervalMs);
    if (this.history.length === 0) void this.tick();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0 && this.timer !== undefined) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  close(): void {
    this.listeners.clear();
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One sample now (also what `listen` sends). */
  async sample(): Promise<Sample> {
    const [reports, stats] = await Promise.all([
      askAll<MemberReport>(this.cluster, this.actor, { t: 'admin.report' }, this.timeoutMs),
      askAll<MemberStats>(
        this.cluster,
        this.actor,
        { t: 'admin.stats', top: 10, by: 'calls' },
        this.timeoutMs,
      ),
    ]);
    const topology = this.cluster.topology;
    const activations: Record<string, number> = {};
    const answered = new Map(reports.answers.map((a) => [a.member.id, a.answer]));
    const members = topology.members.map((m) => {
      const rep = answered.get(m.id);
      const shards: Record<string, number[] | number> = {};
      let total = 0;
      if (rep !== undefined) {
        const lists: Record<string, number[]> = {};
        for (const s of rep.shards) (lists[s.kind] ??= []).push(s.shard);
        for (const [kind, list] of Object.entries(lists)) {
          shards[kind] = list.length > SHARD_LIST_LIMIT ? list.length : list;
        }
        for (const [kind, n] of Object.entries(rep.activations)) {
          activations[kind] = (activations[kind] ?? 0) + n;
          total += n;
        }
      }
      return {
        id: m.id,
        status: rep?.status ?? m.status,
        answered: rep !== undefined,
        activations: total,
        shards,
      };
    });
    const sv = shardsView(topology, reports, undefined);
    const allMoving = sv.kinds.flatMap((k) =>
      k.shards
        .filter((s) => s.owner !== s.desiredOwner)
        .map((s) => ({
          kind: k.kind,
          shard: s.shard,
          owner: s.owner,
          desiredOwner: s.desiredOwner,
        })),
    );
    const rates = this.rates(stats.answers.map((a) => a.answer));
    const top = stats.answers
      .flatMap((a) =>
        a.answer.kinds.flatMap((k) =>
          k.top.map((g) => ({
            kind: k.kind,
            identity: g.identity,
            member: a.answer.member,
            calls: g.calls,
          })),
        ),
      )
      .sort((a, b) => b.calls - a.calls)
      .slice(0, 10);
    const missing = new Map<string, NotAnswering>();
    for (const n of [...reports.notAnswering, ...stats.notAnswering]) missing.set(n.id, n);
    return {
      t: Date.now(),
      topologyVersion: topology.version,
      members,
      activations,
      ...rates,
      moving: allMoving.slice(0, MOVING_LIMIT),
      movingTotal: allMoving.length,
      top,
      notAnswering: [...missing.values()],
    };
  }

  private async tick(): Promise<void> {
    if (this.busy) return; // a slow round (a member timing out) skips a beat, never piles up
    this.busy = true;
    try {
      const s = await this.sample();
      this.history.push(s);
      if (this.history.length > this.historySize) this.history.shift();
      for (const l of this.listeners) l(s);
    } catch {
      // the next tick tries again; askAll itself never rejects for one member
    } finally {
      this.busy = false;
    }
  }

  /** Per-second rates since each member's previous answer. */
  private rates(
    now: MemberStats[],
  ): Pick<Sample, 'calls' | 'activatedRate' | 'deactivatedRate' | 'deadLettersRate'> {
    let turns = 0;
    let failed = 0;
    let activated = 0;
    let deactivated = 0;
    let dead = 0;
    let seconds = 0;
    const errors: Record<string, number> = {};
    const latency: number[] = [];
    for (const cur of now) {
      const prev = this.previous.get(cur.member);
      this.previous.set(cur.member, cur);
      if (prev === undefined || cur.at <= prev.at) continue;
      const dt = (cur.at - prev.at) / 1000;
      seconds = Math.max(seconds, dt);
      dead += delta(cur.deadLetters, prev.deadLetters) / dt;
      for (const k of cur.kinds) {
        const p = prev.kinds.find((x) => x.kind === k.kind);
        turns += delta(k.turns, p?.turns) / dt;
        failed += delta(k.failed, p?.failed) / dt;
        activated += delta(k.activated, p?.activated) / dt;
        deactivated += delta(k.deactivated, p?.deactivated) / dt;
        for (const [name, n] of Object.entries(k.errors)) {
          const d = delta(n, p?.errors[name]) / dt;
          if (d > 0) errors[name] = (errors[name] ?? 0) + d;
        }
        k.latency.forEach((n, i) => (latency[i] = (latency[i] ?? 0) + delta(n, p?.latency[i])));
      }
    }
    return {
      calls: {
        rate: round(turns),
        p50: quantileOf(latency, 0.5) ?? null,
        p99: quantileOf(latency, 0.99) ?? null,
        failedRate: round(failed),
        errors: Object.fromEntries(Object.entries(errors).map(([k, v]) => [k, round(v)])),
      },
      activatedRate: round(activated),
      deactivatedRate: round(deactivated),
      deadLettersRate: round(dead),
    };
  }
}

/** Growth of a cumulative counter (a restarted member counts from zero again). */
function delta(cur: number, prev: number | undefined): number {
  if (prev === undefined || cur < prev) return cur;
  return cur - prev;
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}

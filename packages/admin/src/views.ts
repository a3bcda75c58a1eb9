import {
  ownerOf,
  type GrainLocation,
  type MemberReport,
  type ReminderStats,
  type ReminderSummary,
  type Topology,
} from '@granary/cluster';
import type { MemberPool, MemberStats } from './admin-protocol';
import type { FanoutResult, NotAnswering } from './fanout';

/** Version of the admin API's JSON (the `/v1/` in its paths). */
export const API_VERSION = 1;

/** One row of `GET /v1/members`. */
export interface MemberRow {
  id: string;
  address: string;
  kinds: string[];
  status: string;
  incarnation: number | undefined;
  /** False when the member did not answer in time (the other fields are the topology's). */
  answered: boolean;
  lease?: MemberReport['lease'];
  uptimeMs?: number;
  topologyVersion?: number;
  /** Live activations on the member, all kinds. */
  activations?: number;
  /** Shards the member holds, all kinds. */
  shards?: number;
}

/** `GET /v1/members`. */
export function membersView(
  askedBy: string,
  topology: Topology,
  r: FanoutResult<MemberReport>,
): {
  version: number;
  askedBy: string;
  topologyVersion: number;
  members: MemberRow[];
  notAnswering: NotAnswering[];
} {
  const byId = new Map(r.answers.map((a) => [a.member.id, a.answer]));
  const members = topology.members.map((m): MemberRow => {
    const rep = byId.get(m.id);
    const base = { id: m.id, address: m.address, kinds: m.kinds, incarnation: m.incarnation };
    if (rep === undefined) return { ...base, status: m.status, answered: false };
    return {
      ...base,
      kinds: rep.kinds,
      status: rep.status,
      incarnation: rep.incarnation ?? m.incarnation,
      answered: true,
      lease: rep.lease,
      uptimeMs: rep.uptimeMs,
      topologyVersion: rep.topologyVersion,
      activations: Object.values(rep.activations).reduce((n, x) => n + x, 0),
      shards: rep.shards.length,
    };
  });
  return {
    version: API_VERSION,
    askedBy,
    topologyVersion: topology.version,
    members,
    notAnswering: r.notAnswering,
  };
}

/** One shard of `GET /v1/shards`. */
export interface ShardRow {
  shard: number;
  /** The member reporting the shard's claim (null: nobody who answered holds it). */
  owner: string | null;
  epoch: number | null;
  /** The owner placement wants under the asking member's topology. */
  desiredOwner: string | null;
}

/** `GET /v1/shards`: per kind, each shard's holder and epoch, as the holders report them. */
export function shardsView(
  topology: Topology,
  r: FanoutResult<MemberReport>,
  onlyKind: string | undefined,
): {
  version: number;
  kinds: Array<{
    kind: string;
    shardCount: number;
    held: number;
    moving: number;
    shards: ShardRow[];
  }>;
  /** A shard two answering members both say they hold (should never be listed). */
  conflicts: Array<{
    kind: string;
    shard: number;
    holders: Array<{ member: string; epoch: number }>;
  }>;
  notAnswering: NotAnswering[];
} {
  const counts = new Map<string, number>();
  const holders = new Map<string, Array<{ member: string; epoch: number }>>();
  for (const { answer } of r.answers) {
    for (const [kind, n] of Object.entries(answer.shardCounts)) counts.set(kind, n);
    for (const s of answer.shards) {
      const key = `${s.kind}\0${s.shard}`;
      const list = holders.get(key) ?? [];
      list.push({ member: answer.id, epoch: s.epoch });
      holders.set(key, list);
    }
  }
  const kinds = [...counts.keys()].filter((k) => onlyKind === undefined || k === onlyKind).sort();
  const conflicts: Array<{
    kind: string;
    shard: number;
    holders: Array<{ member: string; epoch: number }>;
  }> = [];
  const out = kinds.map((kind) => {
    const shardCount = counts.get(kind)!;
    const shards: ShardRow[] = [];
    let held = 0;
    let moving = 0;
    for (let shard = 0; shard < shardCount; shard++) {
      const h = holders.get(`${kind}\0${shard}`) ?? [];
      if (h.length > 1) conflicts.push({ kind, shard, holders: h });
      const top = h.sort((a, b) => b.epoch - a.epoch)[0];
      const desired = ownerOf(kind, shard, topology)?.id ?? null;
      if (top !== undefined) held++;
      if (top?.member !== desired) moving++;
      shards.push({
        shard,
        owner: top?.member ?? null,
        epoch: top?.epoch ?? null,
        desiredOwner: desired,
      });
    }
    return { kind, shardCount, held, moving, shards };
  });
  return { version: API_VERSION, kinds: out, conflicts, notAnswering: r.notAnswering };
}

/** `GET /v1/activations`: counts per kind and member, and the hottest grains cluster-wide. */
export function activationsView(
  reports: FanoutResult<MemberReport>,
  stats: FanoutResult<MemberStats>,
  onlyKind: string | undefined,
  top: number,
  by: 'calls' | 'time',
) {
  const perKind: Record<string, number> = {};
  const perMember: Record<string, Record<string, number>> = {};
  let total = 0;
  for (const { answer } of reports.answers) {
    const mine: Record<string, number> = {};
    for (const [kind, n] of Object.entries(answer.activations)) {
      if (onlyKind !== undefined && kind !== onlyKind) continue;
      mine[kind] = n;
      perKind[kind] = (perKind[kind] ?? 0) + n;
      total += n;
    }
    perMember[answer.id] = mine;
  }
  const hot: Array<{
    kind: string;
    identity: string;
    member: string;
    calls: number;
    busyMs: number;
  }> = [];
  for (const { answer } of stats.answers) {
    for (const k of answer.kinds) {
      if (onlyKind !== undefined && k.kind !== onlyKind) continue;
      for (const g of k.top) {
        hot.push({
          kind: k.kind,
          identity: g.identity,
          member: answer.member,
          calls: g.calls,
          busyMs: g.busyMs,
        });
      }
    }
  }
  hot.sort(by === 'calls' ? (a, b) => b.calls - a.calls : (a, b) => b.busyMs - a.busyMs);
  const missing = new Map<string, NotAnswering>();
  for (const n of [...reports.notAnswering, ...stats.notAnswering]) missing.set(n.id, n);
  return {
    version: API_VERSION,
    total,
    perKind,
    perMember,
    top: hot.slice(0, top),
    by,
    notAnswering: [...missing.values()],
  };
}

/** `GET /v1/locate`: where a grain lives, from its owner's own answer. */
export function locateView(
  owner: { id: string; address: string } | undefined,
  loc: GrainLocation | undefined,
  kind: string,
  identity: string,
  shard: number,
  notAnswering: NotAnswering[],
) {
  const held = loc?.epoch !== undefined;
  return {
    version: API_VERSION,
    kind,
    identity,
    shard,
    owner: held && owner !== undefined ? owner : null,
    epoch: loc?.epoch ?? null,
    active: loc?.activation !== undefined,
    activation: loc?.activation ?? null,
    notAnswering,
  };
}

/** `GET /v1/pools`: each pool's workers per member. */
export function poolsView(r: FanoutResult<MemberPool[]>) {
  const pools = new Map<
    string,
    { pool: string; workers: number; inFlight: number; members: MemberPool[] }
  >();
  for (const { answer } of r.answers) {
    for (const p of answer) {
      const entry = pools.get(p.pool) ?? { pool: p.pool, workers: 0, inFlight: 0, members: [] };
      entry.workers += p.workers.length;
      entry.inFlight += p.inFlight;
      entry.members.push(p);
      pools.set(p.pool, entry);
    }
  }
  return {
    version: API_VERSION,
    pools: [...pools.values()].map((p) => ({
      ...p,
      saturation:
        p.workers === 0
          ? 0
          : p.members.reduce((n, m) => n + m.saturation * m.workers.length, 0) / p.workers,
    })),
    notAnswering: r.notAnswering,
  };
}

/** A member's answer to `admin.reminders`. */
export interface MemberReminders {
  member: string;
  kinds: ReminderSummary[];
  /** Undefined when the member runs without reminders. */
  stats: ReminderStats | undefined;
}

/** `GET /v1/reminders`: per kind, the reminders and jobs loaded by their owners, next due. */
export function remindersView(r: FanoutResult<MemberReminders>) {
  const kinds = new Map<
    string,
    { kind: string; reminders: number; jobs: number; nextDueAt: number | null }
  >();
  for (const { answer } of r.answers) {
    for (const k of answer.kinds) {
      const e = kinds.get(k.kind) ?? { kind: k.kind, reminders: 0, jobs: 0, nextDueAt: null };
      e.reminders += k.reminders;
      e.jobs += k.jobs;
      if (k.nextDueAt !== undefined && (e.nextDueAt === null || k.nextDueAt < e.nextDueAt))
        e.nextDueAt = k.nextDueAt;
      kinds.set(k.kind, e);
    }
  }
  return {
    version: API_VERSION,
    kinds: [...kinds.values()].sort((a, b) => (a.kind < b.kind ? -1 : 1)),
    members: r.answers.map(({ answer }) => ({
      member: answer.member,
      enabled: answer.stats !== undefined,
      kinds: answer.kinds,
      stats: answer.stats ?? null,
    })),
    notAnswering: r.notAnswering,
  };
}

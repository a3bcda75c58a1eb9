import type { ShardReminders } from './shard-loads';

/** The reminders a member has loaded for one kind (ReminderService.summary). */
export interface ReminderSummary {
  kind: string;
  /** Periodic reminders loaded (of the shards this member owns). */
  reminders: number;
  /** One-off jobs loaded (not yet done or failed). */
  jobs: number;
  /** Epoch ms of the earliest next fire or attempt among them. */
  nextDueAt: number | undefined;
}

/** Per kind, the periodic reminders and the jobs loaded in `shards` (the metrics' source). */
export function loadedByKind(
  shards: Iterable<ShardReminders>,
): Map<string, { reminders: number; jobs: number }> {
  const byKind = new Map<string, { reminders: number; jobs: number }>();
  for (const s of shards) {
    let k = byKind.get(s.kind);
    if (k === undefined) byKind.set(s.kind, (k = { reminders: 0, jobs: 0 }));
    for (const r of s.live.values()) {
      if (r.job) k.jobs++;
      else k.reminders++;
    }
  }
  return byKind;
}

/** Per kind: the reminders and jobs loaded in `shards` and the earliest next due (epoch ms). */
export function summarize(shards: Iterable<ShardReminders>, now: number): ReminderSummary[] {
  const byKind = new Map<string, ReminderSummary>();
  for (const s of shards) {
    for (const r of s.live.values()) {
      let k = byKind.get(s.kind);
      if (k === undefined)
        byKind.set(s.kind, (k = { kind: s.kind, reminders: 0, jobs: 0, nextDueAt: undefined }));
      if (r.job) k.jobs++;
      else k.reminders++;
      const due = r.nextDueAt(now);
      if (k.nextDueAt === undefined || due < k.nextDueAt) k.nextDueAt = due;
    }
  }
  return [...byKind.values()];
}

/** One reminder or job a member has loaded (ReminderService.loaded). */
export interface LoadedReminder {
  identity: string;
  name: string;
  shard: number;
  /** 0 for a job. */
  periodMs: number;
  /** Epoch ms of its next fire or attempt (the store's clock). */
  nextDueAt: number;
  /** The last tick claimed (-1: none yet). */
  lastTick: number;
}

/** What a member has loaded of one kind: up to `limit` reminders, and of how many shards. */
export interface LoadedReminders {
  kind: string;
  /** The shards of the kind this member owns and has loaded (their reminders are all here). */
  shards: number[];
  /** Reminders and jobs loaded in them (after `after`, when given). */
  total: number;
  /** The first `limit` of them, by identity, then name. */
  reminders: LoadedReminder[];
}

/** Where a listing goes on from: the reminder listed last, excluded (a page's cursor). */
export interface ReminderCursor {
  identity: string;
  name: string;
}

/**
 * The reminders of `kind` loaded in `shards` (a shard still loading counts as not loaded), those
 * after `after` only when given: a walk of what the member holds in memory, no store call.
 * Sorted so that successive answers (and members' answers merged) list the same first `limit`,
 * and a listing can go on page by page from the last one shown.
 */
export function listLoaded(
  shards: Iterable<ShardReminders>,
  kind: string,
  limit: number,
  now: number,
  after?: ReminderCursor,
): LoadedReminders {
  const out: LoadedReminders = { kind, shards: [], total: 0, reminders: [] };
  for (const s of shards) {
    if (s.kind !== kind || s.loading) continue;
    out.shards.push(s.shard);
    for (const r of s.live.values()) {
      if (after !== undefined && byGrainThenName({ identity: r.id, name: r.name }, after) <= 0) {
        continue;
      }
      out.total++;
      out.reminders.push({
        identity: r.id,
        name: r.name,
        shard: s.shard,
        periodMs: r.stored.spec.periodMs,
        nextDueAt: r.nextDueAt(now),
        lastTick: r.stored.last,
      });
    }
  }
  out.reminders.sort(byGrainThenName);
  if (out.reminders.length > limit) out.reminders.length = limit;
  return out;
}

/** Orders reminders by identity, then name (code units: the same order on every member). */
function byGrainThenName(
  a: { identity: string; name: string },
  b: { identity: string; name: string },
): number {
  if (a.identity !== b.identity) return a.identity < b.identity ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

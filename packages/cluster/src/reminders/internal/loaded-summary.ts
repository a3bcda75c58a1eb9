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
  // Only the first `limit` are kept: a member may hold a million reminders of a kind, and each
  // page sorting them all (an object each) would hold its event loop for every 1,000 listed.
  // The candidates are trimmed to `limit` whenever they reach twice that; once trimmed, one
  // that sorts after the last kept cannot be among the first `limit` and costs no object.
  let last: LoadedReminder | undefined;
  const page = out.reminders;
  for (const s of shards) {
    if (s.kind !== kind || s.loading) continue;
    out.shards.push(s.shard);
    for (const r of s.live.values()) {
      if (after !== undefined && compareKey(r.id, r.name, after) <= 0) continue;
      out.total++;
      if (last !== undefined && compareKey(r.id, r.name, last) > 0) continue;
      page.push({
        identity: r.id,
        name: r.name,
        shard: s.shard,
        periodMs: r.stored.spec.periodMs,
        nextDueAt: r.nextDueAt(now),
        lastTick: r.stored.last,
      });
      if (page.length >= 2 * limit && page.length > limit) {
        page.sort(byGrainThenName);
        page.length = limit;
        last = page[limit - 1];
      }
    }
  }
  page.sort(byGrainThenName);
  if (page.length > limit) page.length = limit;
  return out;
}

/** byGrainThenName of a reminder given by its identity and name. */
function compareKey(identity: string, name: string, b: { identity: string; name: string }): number {
  if (identity !== b.identity) return identity < b.identity ? -1 : 1;
  return name < b.name ? -1 : name > b.name ? 1 : 0;
}

/** Orders reminders by identity, then name (code units: the same order on every member). */
function byGrainThenName(
  a: { identity: string; name: string },
  b: { identity: string; name: string },
): number {
  if (a.identity !== b.identity) return a.identity < b.identity ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

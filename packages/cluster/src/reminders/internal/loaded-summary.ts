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

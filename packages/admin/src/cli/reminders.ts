import type { LoadedReminder, ReminderInfo } from '@granary/cluster';
import type { NotAnswering } from '../fanout';
import { adminFetch, type Target } from './admin-client';
import type { Output } from './commands';
import { duration, printable, table } from './table';

/** A time of the cluster (epoch ms) as the operator reads it: ISO 8601, UTC. */
const when = (ms: number | null | undefined): string =>
  ms === null || ms === undefined ? '-' : new Date(ms).toISOString();

/** A reminder's period, or `job` for a one-off job. */
const every = (periodMs: number): string => (periodMs === 0 ? 'job' : duration(periodMs));

/** `granary reminders`: per kind, the reminders and jobs loaded by their owners. */
export async function summary(t: Target): Promise<Output> {
  const r = await adminFetch<{
    kinds: Array<{ kind: string; reminders: number; jobs: number; nextDueAt: number | null }>;
    notAnswering: NotAnswering[];
  }>(t, 'v1/reminders');
  const text =
    r.kinds.length === 0
      ? 'no reminders loaded\n'
      : table(
          ['KIND', 'REMINDERS', 'JOBS', 'NEXT DUE'],
          r.kinds.map((k) => [k.kind, k.reminders, k.jobs, when(k.nextDueAt)]),
        );
  return { json: r, text, notAnswering: r.notAnswering };
}

/** `granary reminders list <kind> <id>`: the grain's stored reminders and pending jobs. */
export async function ofGrain(t: Target, kind: string, id: string): Promise<Output> {
  const q = new URLSearchParams({ kind, id });
  const r = await adminFetch<{ shard: number; reminders: ReminderInfo[] }>(
    t,
    `v1/reminders/list?${q}`,
  );
  const text =
    r.reminders.length === 0
      ? `${printable(`${kind}/${id}`)} has no reminders\n`
      : table(
          ['NAME', 'PERIOD', 'FIRST DUE', 'CATCH-UP', 'LAST TICK'],
          r.reminders.map((x) => [
            x.name,
            every(x.periodMs),
            when(x.dueAt),
            x.periodMs === 0 ? '-' : x.catchUp,
            x.lastTick,
          ]),
        );
  return { json: r, text, notAnswering: [] };
}

/** `granary reminders list <kind>`: the kind's reminders, as the owners of its shards loaded them. */
export async function ofKind(
  t: Target,
  kind: string,
  limit: number,
  after: string | undefined,
): Promise<Output> {
  const q = new URLSearchParams({ kind, limit: String(limit) });
  if (after !== undefined) q.set('after', after);
  const r = await adminFetch<{
    shardCount: number;
    shardsListed: number;
    total: number;
    truncated: boolean;
    next: string | null;
    reminders: Array<LoadedReminder & { member: string }>;
    membersWithoutReminders: string[];
    notAnswering: NotAnswering[];
  }>(t, `v1/reminders/list?${q}`);
  const rows = table(
    ['GRAIN', 'NAME', 'PERIOD', 'NEXT DUE', 'LAST TICK', 'SHARD', 'MEMBER'],
    r.reminders.map((x) => [
      `${kind}/${x.identity}`,
      x.name,
      every(x.periodMs),
      when(x.nextDueAt),
      x.lastTick,
      x.shard,
      x.member,
    ]),
  );
  const shown = r.truncated ? `the first ${r.reminders.length} of ${r.total}` : `${r.total}`;
  const more =
    r.next === null
      ? ''
      : `more: granary reminders list ${printable(kind)} --limit ${limit} --after ${r.next}\n`;
  const unlisted =
    r.shardsListed < r.shardCount
      ? ` (the other shards have no owner that answered, or are loading: their reminders are not listed)`
      : '';
  const text =
    `${rows}${shown} reminders and jobs, from ${r.shardsListed}/${r.shardCount} shards${unlisted}\n` +
    (r.membersWithoutReminders.length === 0
      ? ''
      : `members without reminders: ${r.membersWithoutReminders.join(', ')}\n`) +
    more;
  return { json: r, text, notAnswering: r.notAnswering };
}

/** `granary reminders remove <kind> <id> <name>`: unregisters one reminder or job. */
export async function remove(t: Target, kind: string, id: string, name: string): Promise<Output> {
  const r = await adminFetch<{ removed: boolean }>(t, 'v1/reminders/remove', { kind, id, name });
  const what = printable(`'${name}' of ${kind}/${id}`);
  return { json: r, text: `removed ${what}\n`, notAnswering: [] };
}

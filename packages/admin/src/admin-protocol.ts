import type {
  GrainStatsSnapshot,
  LoadedReminders,
  MemberReport,
  ReminderCursor,
} from '@granary/cluster';

/** The name of the admin actor every admin-enabled member runs. */
export const ADMIN_ACTOR = '$granary-admin';

/** Longest kind or identity an admin request may name (grain identities are ≤ 1 KiB). */
const MAX_NAME = 1024;

/** What one member asks another's admin actor. */
export type AdminAsk =
  | { t: 'admin.report' }
  | { t: 'admin.stats'; top: number; by: 'calls' | 'time' }
  | { t: 'admin.locate'; kind: string; id: string }
  | { t: 'admin.deactivate'; kind: string; id: string }
  | { t: 'admin.pools' }
  | { t: 'admin.reminders' }
  | { t: 'admin.reminders.loaded'; kind: string; limit: number; after?: ReminderCursor }
  | { t: 'admin.drain' };

/**
 * Most reminders one member lists for `GET /v1/reminders/list?kind=` (`limit`). A member's answer
 * travels as one message, bounded by the remote's `maxMessageBytes` (4 MiB by default); an
 * identity and a name may each be 1 KiB, so 1,000 is ~2 MiB at worst. At 10,000 a kind of long
 * identities made every member's answer too large: all of them 'not answering'.
 */
export const MAX_REMINDERS_LISTED = 1000;

/** A member's answer to `admin.reminders.loaded`: what it has loaded of the kind. */
export interface MemberLoadedReminders {
  member: string;
  /** Null when the member runs without `reminders`. */
  loaded: LoadedReminders | null;
}

/** A member's answer to `admin.stats`: its served-turn statistics and dead letters. */
export interface MemberStats {
  member: string;
  /** Wall clock of the member when it answered (ms). */
  at: number;
  kinds: GrainStatsSnapshot[];
  /** Dead letters on this member since the admin API was enabled. */
  deadLetters: number;
}

/** A member's share of a cluster pool: its worker activations. */
export interface MemberPool {
  pool: string;
  member: string;
  workers: Array<{ index: string; activationId: string; inFlight: number; idleMs: number }>;
  /** Messages queued or running at this member's workers. */
  inFlight: number;
  /** Share of this member's workers with work (0..1). */
  saturation: number;
}

export type { MemberReport };

/** Parses a request from a peer; undefined when it is not a well-formed admin request. */
export function parseAsk(m: unknown): AdminAsk | undefined {
  if (m === null || typeof m !== 'object') return undefined;
  const a = m as Record<string, unknown>;
  switch (a.t) {
    case 'admin.report':
    case 'admin.pools':
    case 'admin.reminders':
    case 'admin.drain':
      return { t: a.t };
    case 'admin.stats': {
      const top = a.top;
      if (!(Number.isInteger(top) && (top as number) >= 0 && (top as number) <= 1000))
        return undefined;
      if (a.by !== 'calls' && a.by !== 'time') return undefined;
      return { t: a.t, top: top as number, by: a.by };
    }
    case 'admin.reminders.loaded': {
      const limit = a.limit;
      if (!isName(a.kind)) return undefined;
      if (!(Number.isInteger(limit) && (limit as number) >= 1)) return undefined;
      if ((limit as number) > MAX_REMINDERS_LISTED) return undefined;
      const ask = { t: a.t, kind: a.kind, limit: limit as number };
      if (a.after === undefined) return ask;
      const after = a.after as Partial<ReminderCursor> | null;
      if (after === null || typeof after !== 'object') return undefined;
      if (!isName(after.identity) || !isName(after.name)) return undefined;
      return { ...ask, after: { identity: after.identity, name: after.name } };
    }
    case 'admin.locate':
    case 'admin.deactivate':
      if (!isName(a.kind) || !isName(a.id)) return undefined;
      return { t: a.t, kind: a.kind, id: a.id };
    default:
      return undefined;
  }
}

function isName(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0 && v.length <= MAX_NAME;
}

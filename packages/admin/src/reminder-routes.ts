import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidArgumentError } from '@granary/core';
import {
  RemindersNotConfiguredError,
  type Cluster,
  type LoadedReminder,
  type ReminderCursor,
  type ReminderInfo,
} from '@granary/cluster';
import type { AdminActor } from './admin-actor';
import { MAX_REMINDERS_LISTED, type MemberLoadedReminders } from './admin-protocol';
import { askAll, type FanoutResult } from './fanout';
import { API_CODES, HttpError } from './http-io';
import { intParam, queryOf, readJson, requireName, sendJson } from './http-io';
import { API_VERSION } from './views';

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;
type Route = (path: string, h: Handler) => void;

/** Reminders a kind-wide list shows unless `limit` says otherwise. */
const DEFAULT_REMINDERS_LISTED = 1000;

/** What the reminder routes need of their Admin. */
export interface ReminderRouteDeps {
  readonly cluster: Cluster;
  readonly actor: AdminActor;
  readonly timeoutMs: number;
  /** The kind, checked against the topology (404 `ERR_ADMIN_UNKNOWN_KIND`). */
  kindParam(kind: string): string;
}

/**
 * `GET /v1/reminders/list?kind=K&id=I`: the grain's stored reminders, read from the store by
 * this member (`cluster.reminders(kind, id).list()`).
 * `GET /v1/reminders/list?kind=K[&limit=N]`: every reminder of the kind, as the owners of its
 * shards have loaded them (each member lists its own from memory; the store has no call that
 * enumerates a kind, and loading a shard would fence its owner out).
 * `POST /v1/reminders/remove {kind, id, name}`: unregisters one (404 when there is none).
 */
export function mountReminderRoutes(get: Route, post: Route, d: ReminderRouteDeps): void {
  get('/v1/reminders/list', async (req, res) => {
    const q = queryOf(req);
    const kind = d.kindParam(requireName(q.get('kind') ?? undefined, 'kind'));
    if (q.has('id')) {
      const id = requireName(q.get('id') ?? undefined, 'id');
      const reminders: ReminderInfo[] = await storeCall(() => d.cluster.reminders(kind, id).list());
      reminders.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      const shard = d.cluster.shardOf(kind, id);
      sendJson(res, 200, { version: API_VERSION, kind, identity: id, shard, reminders });
      return;
    }
    const limit = intParam(
      q.get('limit'),
      DEFAULT_REMINDERS_LISTED,
      1,
      MAX_REMINDERS_LISTED,
      'limit',
    );
    const after = cursorParam(q.get('after'));
    const r = await askAll<MemberLoadedReminders>(
      d.cluster,
      d.actor,
      { t: 'admin.reminders.loaded', kind, limit, ...(after === undefined ? {} : { after }) },
      d.timeoutMs,
    );
    sendJson(res, 200, loadedView(r, kind, limit, d.cluster.shardCountOf(kind)));
  });
  post('/v1/reminders/remove', async (req, res) => {
    const body = await readJson(req);
    const kind = d.kindParam(requireName(body.kind, 'kind'));
    const id = requireName(body.id, 'id');
    const name = requireName(body.name, 'name');
    const removed = await storeCall(() => d.cluster.reminders(kind, id).delete(name));
    if (!removed) {
      throw new HttpError(
        404,
        `grain ${kind}/${id} has no reminder or job '${name}'`,
        API_CODES.noSuchReminder,
      );
    }
    sendJson(res, 200, { version: API_VERSION, kind, identity: id, name, removed: true });
  });
}

/**
 * Runs a reminder operation of this member, its errors as answers: 409 without a reminder store,
 * 400 for a name or identity no reminder may have, 502 for the store's own (unavailable,
 * corrupt: `code` is the error's).
 */
async function storeCall<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    if (RemindersNotConfiguredError.is(err)) {
      throw new HttpError(
        409,
        `the member answering runs without reminders: ${err.message}`,
        API_CODES.remindersNotConfigured,
      );
    }
    if (InvalidArgumentError.is(err)) throw new HttpError(400, err.message);
    const e = err as { name?: string; code?: string; message?: string };
    throw new HttpError(502, `${e.name ?? 'Error'}: ${e.message ?? String(err)}`, e.code);
  }
}

/**
 * The members' lists merged (by identity then name, the first `limit`), and how complete they
 * are: a shard no answering member has loaded (unowned, loading, its owner not answering) has
 * reminders the list cannot show.
 */
function loadedView(
  r: FanoutResult<MemberLoadedReminders>,
  kind: string,
  limit: number,
  shardCount: number,
) {
  const seen = new Set<string>();
  const all: Array<LoadedReminder & { member: string }> = [];
  const shards = new Set<number>();
  let total = 0;
  const disabled: string[] = [];
  for (const { answer } of r.answers) {
    if (answer.loaded === null) {
      disabled.push(answer.member);
      continue;
    }
    for (const shard of answer.loaded.shards) shards.add(shard);
    total += answer.loaded.total;
    for (const x of answer.loaded.reminders) {
      // Two members that both held a shard for a moment (a hand-over) list it twice.
      const key = JSON.stringify([x.identity, x.name]);
      if (seen.has(key)) continue;
      seen.add(key);
      all.push({ ...x, member: answer.member });
    }
  }
  all.sort(byGrainThenName);
  const shown = all.slice(0, limit);
  const last = shown[shown.length - 1];
  return {
    version: API_VERSION,
    kind,
    shardCount,
    /** Shards whose reminders are listed (loaded by a member that answered). */
    shardsListed: shards.size,
    total,
    truncated: total > limit,
    reminders: shown,
    /** Pass as `after` for the next page (null: this page is the last). */
    next: total > limit && last !== undefined ? cursorOf(last) : null,
    membersWithoutReminders: disabled,
    notAnswering: r.notAnswering,
  };
}

/** The members' order (code units), so merged lists cut at `limit` show the same first ones. */
function byGrainThenName(a: LoadedReminder, b: LoadedReminder): number {
  if (a.identity !== b.identity) return a.identity < b.identity ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * A page's cursor, opaque to the caller: the last reminder it listed, as base64url JSON (an
 * identity may hold any character; this keeps the cursor one safe word on a command line).
 */
function cursorOf(r: LoadedReminder): string {
  return Buffer.from(JSON.stringify([r.identity, r.name])).toString('base64url');
}

/** The `after` parameter: a cursor this API gave, or 400. */
function cursorParam(v: string | null): ReminderCursor | undefined {
  if (v === null) return undefined;
  const bad = (): HttpError => new HttpError(400, 'after must be a `next` cursor this API gave');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(v, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw bad();
  const [identity, name] = parsed as unknown[];
  if (typeof identity !== 'string' || typeof name !== 'string') throw bad();
  if (identity === '' || name === '') throw bad();
  return { identity, name };
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidArgumentError, InvalidOptionError, withTypeName } from '@granary/core';
import type { Cluster, GrainLocation, MemberReport } from '@granary/cluster';
import { AdminActor } from './admin-actor';
import {
  DEFAULT_ADMIN_OPTIONS,
  checkAdminOptions,
  type AdminMount,
  type AdminOptions,
} from './admin-options';
import type { MemberPool, MemberStats } from './admin-protocol';
import { resolveToken, TokenCheck } from './admin-token';
import { mountDashboard } from './dashboard-assets';
import { AdminConfigError } from './errors';
import { askAll, askMember } from './fanout';
import {
  API_CODES,
  HttpError,
  intParam,
  queryOf,
  readJson,
  requireName,
  sendJson,
  startEvents,
} from './http-io';
import { mountReminderRoutes } from './reminder-routes';
import { Sampler } from './sampler';
import {
  activationsView,
  API_VERSION,
  locateView,
  membersView,
  poolsView,
  remindersView,
  shardsView,
  type MemberReminders,
} from './views';

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** Largest `POST /v1/call` body: a request message of up to ~750 KiB in base64. */
const MAX_CALL_BODY_BYTES = 1024 * 1024;
/** Live-view bytes a viewer may leave unread in this process before its stream is closed. */
const MAX_EVENTS_BACKLOG_BYTES = 1024 * 1024;

/**
 * The admin API of one member, on its ops server under `/v1/` (JSON, bearer token), with the
 * dashboard at `/`. Any member answers cluster-wide questions by asking the others' admin
 * actors within `fanoutTimeoutMs`, and says which did not answer. See docs/admin-api.md.
 *
 * @example
 * const cluster = await Cluster.start({ ..., ops: { port: 9464 } });
 * const admin = await Admin.enable(cluster, { token: process.env.GRANARY_ADMIN_TOKEN });
 * // granary members --url http://127.0.0.1:9464 --token $GRANARY_ADMIN_TOKEN
 * admin.close(); // before cluster.shutdown()
 */
export class Admin {
  /** The token requests must present (the generated one when none was given). */
  readonly token: string;
  /** Where the admin API answers (`<ops url>/v1/`). */
  readonly url: string;
  private readonly check: TokenCheck;
  private readonly actor: AdminActor;
  private readonly sampler: Sampler;
  private readonly timeoutMs: number;
  private closed = false;

  private constructor(
    private readonly cluster: Cluster,
    mount: AdminMount,
    options: AdminOptions,
  ) {
    const host = new URL(mount.url).hostname;
    const { token, generated } = resolveToken(options.token, host);
    this.token = token;
    this.url = mount.url;
    this.check = new TokenCheck(token);
    this.timeoutMs = options.fanoutTimeoutMs ?? DEFAULT_ADMIN_OPTIONS.fanoutTimeoutMs;
    const interval = options.sampleIntervalMs ?? DEFAULT_ADMIN_OPTIONS.sampleIntervalMs;
    for (const [name, v] of [
      ['fanoutTimeoutMs', this.timeoutMs],
      ['sampleIntervalMs', interval],
    ] as const) {
      if (!(Number.isFinite(v) && v > 0))
        throw new InvalidOptionError(`admin.${name}`, `must be > 0, got ${v}`);
    }
    this.actor = new AdminActor(cluster, () => this.drainSelf(options.onDrained));
    cluster.introspect().enableStats();
    this.sampler = new Sampler(cluster, this.actor, interval, this.timeoutMs);
    this.mountRoutes(mount);
    mountDashboard(mount);
    if (generated) {
      const print = options.print ?? ((line: string) => process.stderr.write(line + '\n'));
      // Printed once, never logged: it grants the whole admin API.
      print(
        `granary admin: ${mount.url}/  token: ${token}  (generated; set GRANARY_ADMIN_TOKEN to choose one)`,
      );
    }
  }

  /**
   * Enables the admin API on `cluster`'s ops server (or `options.mount`). Off unless called.
   * @throws AdminConfigError without an ops server, or on a non-loopback address without a token.
   */
  static async enable(cluster: Cluster, options: AdminOptions = {}): Promise<Admin> {
    checkAdminOptions(options);
    const mount: AdminMount | undefined = options.mount ?? cluster.ops;
    if (mount === undefined) {
      throw new AdminConfigError(
        'the admin API mounts on the ops server: start the cluster with an ops option ({ ops: { port } })',
      );
    }
    return Promise.resolve(new Admin(cluster, mount, options));
  }

  /** Stops answering peers and the live view (the routes answer 503 afterwards). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.sampler.close();
    this.actor.stop();
  }

  private mountRoutes(mount: AdminMount): void {
    const get = (path: string, h: Handler) => mount.route('GET', path, this.guard(h));
    const post = (path: string, h: Handler) => mount.route('POST', path, this.guard(h));
    get('/v1', async (_req, res) =>
      sendJson(res, 200, {
        version: API_VERSION,
        member: this.cluster.id,
        cluster: this.cluster.name,
        endpoints: [
          'members',
          'shards',
          'activations',
          'locate',
          'pools',
          'reminders',
          'reminders/list',
          'reminders/remove',
          'events',
          'call',
          'drain',
          'deactivate',
        ],
      }),
    );
    get('/v1/members', async (_req, res) => {
      const r = await askAll<MemberReport>(
        this.cluster,
        this.actor,
        { t: 'admin.report' },
        this.timeoutMs,
      );
      sendJson(res, 200, membersView(this.cluster.id, this.cluster.topology, r));
    });
    get('/v1/shards', async (req, res) => {
      const kind = this.kindParam(queryOf(req).get('kind') ?? undefined);
      const r = await askAll<MemberReport>(
        this.cluster,
        this.actor,
        { t: 'admin.report' },
        this.timeoutMs,
      );
      sendJson(res, 200, shardsView(this.cluster.topology, r, kind));
    });
    get('/v1/activations', async (req, res) => {
      const q = queryOf(req);
      const kind = this.kindParam(q.get('kind') ?? undefined);
      const top = intParam(q.get('top'), 10, 0, 1000, 'top');
      const by = q.get('by') ?? 'calls';
      if (by !== 'calls' && by !== 'time') throw new HttpError(400, "by must be 'calls' or 'time'");
      const [reports, stats] = await Promise.all([
        askAll<MemberReport>(this.cluster, this.actor, { t: 'admin.report' }, this.timeoutMs),
        askAll<MemberStats>(
          this.cluster,
          this.actor,
          { t: 'admin.stats', top, by },
          this.timeoutMs,
        ),
      ]);
      sendJson(res, 200, activationsView(reports, stats, kind, top, by));
    });
    get('/v1/locate', async (req, res) => {
      const q = queryOf(req);
      const kind = this.kindParam(requireName(q.get('kind') ?? undefined, 'kind'))!;
      const id = requireName(q.get('id') ?? undefined, 'id');
      sendJson(res, 200, await this.locate(kind, id));
    });
    get('/v1/pools', async (_req, res) => {
      const r = await askAll<MemberPool[]>(
        this.cluster,
        this.actor,
        { t: 'admin.pools' },
        this.timeoutMs,
      );
      sendJson(res, 200, poolsView(r));
    });
    get('/v1/reminders', async (_req, res) => {
      const r = await askAll<MemberReminders>(
        this.cluster,
        this.actor,
        { t: 'admin.reminders' },
        this.timeoutMs,
      );
      sendJson(res, 200, remindersView(r));
    });
    get('/v1/events', async (req, res) => {
      startEvents(res);
      const stop = this.sampler.listen((s) => {
        if (res.destroyed) return;
        // A viewer that stopped reading: its samples would pile up here; 'close' stops them.
        if (res.writableLength > MAX_EVENTS_BACKLOG_BYTES) return void res.destroy();
        res.write(`event: sample\ndata: ${JSON.stringify(s)}\n\n`);
      });
      const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
      req.on('close', () => {
        clearInterval(keepAlive);
        stop();
      });
      await Promise.resolve();
    });
    post('/v1/drain', async (req, res) => {
      const body = await readJson(req);
      const id = requireName(body.member, 'member');
      const member = this.cluster.topology.members.find((m) => m.id === id);
      if (member === undefined) throw new HttpError(404, `no member ${id} in the topology`);
      await askMember(this.cluster, this.actor, member, { t: 'admin.drain' }, this.timeoutMs);
      sendJson(res, 202, { version: API_VERSION, draining: id });
    });
    post('/v1/call', async (req, res) => {
      const body = await readJson(req, MAX_CALL_BODY_BYTES);
      const kind = this.kindParam(requireName(body.kind, 'kind'))!;
      const id = requireName(body.id, 'id');
      const method = requireName(body.method, 'method');
      if (!/^[A-Za-z_][\w.]*\/[A-Za-z_]\w*$/.test(method)) {
        throw new HttpError(400, 'method must be package.Service/Method');
      }
      if (typeof body.payload !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(body.payload)) {
        throw new HttpError(
          400,
          'payload must be the request message, protobuf-encoded, in base64',
        );
      }
      if (body.timeoutMs !== undefined && typeof body.timeoutMs !== 'number') {
        throw new HttpError(400, 'timeoutMs must be an integer in [1, 300000]');
      }
      const timeoutMs = intParam(
        body.timeoutMs === undefined ? null : String(body.timeoutMs),
        10_000,
        1,
        300_000,
        'timeoutMs',
      );
      const invoke = withTypeName('granary.GrainInvoke', {
        method,
        payload: new Uint8Array(Buffer.from(body.payload, 'base64')),
      });
      try {
        const reply = await this.cluster.request<{ payload?: unknown }>(kind, id, invoke, {
          timeoutMs,
          idempotent: body.idempotent === true,
        });
        const payload = reply?.payload;
        const bytes = payload instanceof Uint8Array ? payload : new Uint8Array(0);
        sendJson(res, 200, {
          version: API_VERSION,
          payload: Buffer.from(bytes).toString('base64'),
        });
      } catch (err) {
        // Refused before it was sent (an identity no grain may have): the request's fault.
        if (InvalidArgumentError.is(err)) throw new HttpError(400, err.message);
        const e = err as {
          name?: string;
          code?: string;
          originalName?: string;
          originalCode?: string;
          message?: string;
        };
        sendJson(res, 502, {
          error: e.message ?? String(err),
          name: e.name,
          code: e.code,
          originalName: e.originalName,
          originalCode: e.originalCode,
        });
      }
    });
    mountReminderRoutes(get, post, {
      cluster: this.cluster,
      actor: this.actor,
      timeoutMs: this.timeoutMs,
      kindParam: (kind) => this.kindParam(kind)!,
    });
    post('/v1/deactivate', async (req, res) => {
      const body = await readJson(req);
      const kind = this.kindParam(requireName(body.kind, 'kind'))!;
      const id = requireName(body.id, 'id');
      const where = await this.locate(kind, id);
      if (where.owner === null) {
        return sendJson(res, 200, { version: API_VERSION, deactivated: false, member: null });
      }
      const r = await askMember<{ deactivated: boolean }>(
        this.cluster,
        this.actor,
        where.owner,
        { t: 'admin.deactivate', kind, id },
        this.timeoutMs,
      );
      sendJson(res, 200, {
        version: API_VERSION,
        deactivated: r.deactivated,
        member: where.owner.id,
      });
    });
  }

  /** Checks the token first: a request without the right one gets 401 and nothing else. */
  private guard(h: Handler): Handler {
    return async (req, res) => {
      if (!this.check.matches(req.headers.authorization)) {
        res.writeHead(401, {
          'www-authenticate': 'Bearer',
          'content-type': 'application/json; charset=utf-8',
          'cache-control': 'no-store',
        });
        res.end('{"error":"unauthorized"}');
        return;
      }
      if (this.closed) {
        return sendJson(res, 503, { error: 'the admin API is closed', code: API_CODES.closed });
      }
      try {
        await h(req, res);
      } catch (err) {
        if (err instanceof HttpError) return sendJson(res, err.status, err.body());
        throw err;
      }
    };
  }

  private kindParam(kind: string | undefined): string | undefined {
    if (kind === undefined) return undefined;
    const known = this.cluster.topology.members.some((m) => m.kinds.includes(kind));
    if (!known) throw new HttpError(404, `no member hosts kind ${kind}`, API_CODES.unknownKind);
    return kind;
  }

  /** Asks the desired owner; if it does not hold the claim, every member. */
  private async locate(kind: string, id: string) {
    const shard = this.cluster.shardOf(kind, id);
    const desired = this.cluster.ownerOf(kind, shard);
    const ask = { t: 'admin.locate', kind, id } as const;
    if (desired !== undefined) {
      try {
        const loc = await askMember<GrainLocation>(
          this.cluster,
          this.actor,
          desired,
          ask,
          this.timeoutMs,
        );
        if (loc.epoch !== undefined) return locateView(desired, loc, kind, id, shard, []);
      } catch {
        // asked everyone below
      }
    }
    const all = await askAll<GrainLocation>(this.cluster, this.actor, ask, this.timeoutMs);
    const holder = all.answers
      .filter((a) => a.answer.epoch !== undefined)
      .sort((a, b) => b.answer.epoch! - a.answer.epoch!)[0];
    return locateView(holder?.member, holder?.answer, kind, id, shard, all.notAnswering);
  }

  /**
   * Leaves gracefully, then closes the admin API: a member that left has no cluster to answer
   * for, and its routes (on a server the cluster's shutdown leaves open: `mount`, or the process
   * keeps running without `onDrained`) answered with its last topology, itself in it as
   * `stopped`, so `granary drain` waited its whole 120 s for it to leave.
   */
  private drainSelf(onDrained: (() => void) | undefined): void {
    const done = (): void => {
      this.close();
      onDrained?.();
    };
    void this.cluster.shutdown({ graceful: true }).then(done, done);
  }
}

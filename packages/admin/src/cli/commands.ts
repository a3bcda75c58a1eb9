import type { NotAnswering } from '../fanout';
import { API_CODES } from '../http-io';
import type { MemberRow, ShardRow } from '../views';
import { adminFetch, type Target } from './admin-client';
import { CliExit, EXIT } from './exit-codes';
import { duration, table } from './table';

/** What a command produced: its JSON, its table, and whether some member did not answer. */
export interface Output {
  json: unknown;
  text: string;
  notAnswering: NotAnswering[];
}

interface Missing {
  notAnswering: NotAnswering[];
}

export async function members(t: Target): Promise<Output> {
  const r = await adminFetch<{ members: MemberRow[]; topologyVersion: number } & Missing>(
    t,
    'v1/members',
  );
  const rows = r.members.map((m) => [
    m.id,
    m.address,
    m.answered ? m.status : 'not answering',
    m.kinds.join(','),
    m.incarnation ?? '-',
    m.lease === undefined
      ? '-'
      : `${m.lease.valid ? 'valid' : 'LOST'} ${duration(m.lease.sinceMs)}`,
    m.activations ?? '-',
    m.shards ?? '-',
    duration(m.uptimeMs),
  ]);
  const text = table(
    [
      'MEMBER',
      'ADDRESS',
      'STATUS',
      'KINDS',
      'INCARNATION',
      'LEASE',
      'ACTIVATIONS',
      'SHARDS',
      'UPTIME',
    ],
    rows,
  );
  return { json: r, text, notAnswering: r.notAnswering };
}

export async function shards(t: Target, kind: string | undefined): Promise<Output> {
  const q = kind === undefined ? '' : `?kind=${encodeURIComponent(kind)}`;
  const r = await adminFetch<
    {
      kinds: Array<{
        kind: string;
        shardCount: number;
        held: number;
        moving: number;
        shards: ShardRow[];
      }>;
      conflicts: unknown[];
    } & Missing
  >(t, `v1/shards${q}`);
  const rows = r.kinds.flatMap((k) =>
    k.shards.map((s) => [
      k.kind,
      s.shard,
      s.owner ?? '(none)',
      s.epoch ?? '-',
      s.owner === s.desiredOwner ? '' : `-> ${s.desiredOwner ?? '(none)'}`,
    ]),
  );
  const summary = r.kinds
    .map((k) => `${k.kind}: ${k.held}/${k.shardCount} shards held, ${k.moving} moving`)
    .join('\n');
  const text = table(['KIND', 'SHARD', 'OWNER', 'EPOCH', 'MOVING'], rows) + summary + '\n';
  return { json: r, text, notAnswering: r.notAnswering };
}

export async function locate(t: Target, kind: string, id: string): Promise<Output> {
  const r = await adminFetch<
    {
      kind: string;
      identity: string;
      shard: number;
      owner: { id: string; address: string } | null;
      epoch: number | null;
      active: boolean;
      activation: {
        activationId: string;
        mailboxDepth: number;
        idleMs: number;
        state: string;
      } | null;
    } & Missing
  >(t, `v1/locate?kind=${encodeURIComponent(kind)}&id=${encodeURIComponent(id)}`);
  const a = r.activation;
  const text = table(
    ['GRAIN', 'SHARD', 'OWNER', 'EPOCH', 'ACTIVE', 'ACTIVATION', 'MAILBOX', 'IDLE'],
    [
      [
        `${r.kind}/${r.identity}`,
        r.shard,
        r.owner === null ? '(none)' : `${r.owner.id} ${r.owner.address}`,
        r.epoch ?? '-',
        r.active ? 'yes' : 'no',
        a?.activationId ?? '-',
        a?.mailboxDepth ?? '-',
        a === null ? '-' : duration(a.idleMs),
      ],
    ],
  );
  return { json: r, text, notAnswering: r.notAnswering };
}

export async function grains(
  t: Target,
  kind: string | undefined,
  top: number,
  by: string,
): Promise<Output> {
  const q = new URLSearchParams({ top: String(top), by });
  if (kind !== undefined) q.set('kind', kind);
  const r = await adminFetch<
    {
      total: number;
      perKind: Record<string, number>;
      perMember: Record<string, Record<string, number>>;
      top: Array<{ kind: string; identity: string; member: string; calls: number; busyMs: number }>;
    } & Missing
  >(t, `v1/activations?${q}`);
  const members = Object.keys(r.perMember).sort();
  const kinds = Object.keys(r.perKind).sort();
  const counts = table(
    ['KIND', ...members, 'TOTAL'],
    kinds.map((k) => [k, ...members.map((m) => r.perMember[m]?.[k] ?? 0), r.perKind[k] ?? 0]),
  );
  const hot = table(
    ['GRAIN', 'MEMBER', 'CALLS', 'BUSY MS'],
    r.top.map((g) => [`${g.kind}/${g.identity}`, g.member, g.calls, Math.round(g.busyMs)]),
  );
  return {
    json: r,
    text: `${counts}${r.total} activations\n\nTop grains by ${by}:\n${hot}`,
    notAnswering: r.notAnswering,
  };
}

export async function pools(t: Target): Promise<Output> {
  const r = await adminFetch<
    {
      pools: Array<{
        pool: string;
        workers: number;
        inFlight: number;
        saturation: number;
        members: Array<{
          member: string;
          workers: unknown[];
          inFlight: number;
          saturation: number;
        }>;
      }>;
    } & Missing
  >(t, 'v1/pools');
  const rows = r.pools.flatMap((p) =>
    p.members.map((m) => [
      p.pool,
      m.member,
      m.workers.length,
      m.inFlight,
      `${Math.round(m.saturation * 100)}%`,
    ]),
  );
  const text =
    r.pools.length === 0
      ? 'no pools\n'
      : table(['POOL', 'MEMBER', 'WORKERS', 'IN FLIGHT', 'SATURATION'], rows);
  return { json: r, text, notAnswering: r.notAnswering };
}

export async function drain(
  t: Target,
  member: string,
  wait: boolean,
  progress: (line: string) => void,
): Promise<Output> {
  const r = await adminFetch<{ draining: string }>(t, 'v1/drain', { member });
  if (!wait) return { json: r, text: `draining ${member}\n`, notAnswering: [] };
  const deadline = Date.now() + Math.max(t.timeoutMs, 120_000);
  const spin = ['|', '/', '-', '\\'];
  for (let i = 0; Date.now() < deadline; i++) {
    const m = await adminFetch<{ members: MemberRow[] }>(t, 'v1/members').catch((err: unknown) => {
      if (apiWentWithMember(err)) return undefined;
      throw err;
    });
    if (m === undefined) {
      // The member answering the API was the one drained: its admin API went with it.
      return {
        json: { ...r, left: true },
        text: `${member} drained; its admin API closed with it\n`,
        notAnswering: [],
      };
    }
    const row = m.members.find((x) => x.id === member);
    // `stopped`: the member says it has left (a view that still lists it is out of date).
    if (row === undefined || (row.answered && row.status === 'stopped')) {
      return {
        json: { ...r, left: true },
        text: `${member} drained and left the cluster\n`,
        notAnswering: [],
      };
    }
    progress(
      `${spin[i % 4]} draining ${member}: ${row.status}, ${row.shards ?? '?'} shards, ${row.activations ?? '?'} activations`,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new CliExit(EXIT.failed, `${member} did not leave within the wait`);
}

/**
 * True when a poll of a drain failed because the admin API asked went away with its member:
 * unreachable (the ops server closed) or answering that it is closed (a server of the
 * application's, which outlives the member).
 */
function apiWentWithMember(err: unknown): boolean {
  if (!(err instanceof CliExit)) return false;
  return err.exitCode === EXIT.unreachable || err.apiCode === API_CODES.closed;
}

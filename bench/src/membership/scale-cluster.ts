import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { ownerOf, type Member, type Topology } from '@granary/cluster';
import { NodeProcess } from '@granary/testkit';
import type { ScaleNodeConfig } from './scale-node';

/** The member processes of one membership-scale scenario, on one etcd. */
export interface ScaleShape {
  processes: number;
  perProcess: number;
  kinds: string[];
  shardCount?: number;
  claimRanges?: number;
  historyRetentionMs?: number;
}

/** Default claim ranges (kept equal to the cluster package's DEFAULT_CLAIM_RANGES). */
const DEFAULT_RANGES = 16_384;

/**
 * N member processes started together (a cold join storm), and what the benchmark asks of them:
 * whether they settled (each member holds exactly the ranges it is the desired owner of, every
 * range held, checked against etcd), the claim audit, the longest event-loop turn, a join.
 */
export class ScaleCluster {
  readonly procs: NodeProcess[] = [];
  private readonly client: Etcd3;
  private next = 0;

  constructor(
    private readonly endpoints: string[],
    readonly name: string,
    private readonly shape: ScaleShape,
  ) {
    // Reading every claim key (65,536 for 4 kinds) is a message larger than grpc's default 4 MB.
    this.client = new Etcd3({
      hosts: endpoints,
      grpcOptions: { 'grpc.max_receive_message_length': 256 * 1024 * 1024 },
    });
  }

  /** Starts a process hosting `count` members; resolves when all of them joined. */
  async addProcess(count = this.shape.perProcess): Promise<NodeProcess> {
    const ids = Array.from({ length: count }, () => `m${String(this.next++).padStart(4, '0')}`);
    const config: ScaleNodeConfig = {
      endpoints: this.endpoints,
      cluster: this.name,
      ids,
      kinds: this.shape.kinds,
      shardCount: this.shape.shardCount,
      claimRanges: this.shape.claimRanges,
      historyRetentionMs: this.shape.historyRetentionMs,
    };
    const proc = NodeProcess.spawn({
      script: join(__dirname, 'scale-node.js'),
      config,
      label: ids[0],
    });
    this.procs.push(proc);
    let ready = 0;
    await proc.waitFor((d) => d.type === 'ready' && ++ready === count, 120_000);
    return proc;
  }

  /** Starts every process of the shape at once (the storm). */
  async storm(): Promise<void> {
    await Promise.all(Array.from({ length: this.shape.processes }, () => this.addProcess()));
  }

  /**
   * Resolves once every process reports its members settled and etcd agrees (every range of every
   * kind claimed by its desired owner); with the time that took from `since`.
   */
  async settled(since: number, timeoutMs = 120_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const last = this.procs.map((p) => {
        for (let i = p.lines.length - 1; i >= 0; i--) {
          const d = p.lines[i]!.data;
          if (d.type === 'settled') {
            return { ok: d.settled === true, at: p.lines[i]!.receivedAt, detail: d };
          }
        }
        return { ok: false, at: 0, detail: undefined };
      });
      const allOk = last.every((l) => l.ok);
      const m = allOk ? await this.mismatches() : undefined;
      if (m?.total === 0) return Math.max(...last.map((l) => l.at)) - since;
      this.trace(since, last, m);
      if (Date.now() > deadline) {
        const unsettled = last.filter((l) => !l.ok);
        const sample = unsettled.slice(0, 3).map((l) => JSON.stringify(l.detail ?? 'no report'));
        throw new Error(
          `not settled within ${timeoutMs} ms: ${unsettled.length} of ${this.procs.length} ` +
            `processes report members not holding exactly their desired shards (e.g. ` +
            `${sample.join(', ')}); etcd: ${await this.diagnose()}`,
        );
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  private tracedAt = 0;

  /**
   * SCALE_LOG_DIR: once a second while not settled, appends to <dir>/settle.log what keeps the
   * run from settling: the processes that report members off their desired ranges, or (when all
   * report settled) the ranges etcd holds otherwise, with samples.
   */
  private trace(
    since: number,
    last: Array<{ ok: boolean; detail: Record<string, unknown> | undefined }>,
    m: Awaited<ReturnType<ScaleCluster['mismatches']>> | undefined,
  ): void {
    const dir = process.env.SCALE_LOG_DIR;
    if (!dir || Date.now() - this.tracedAt < 1000) return;
    this.tracedAt = Date.now();
    const procs = last.flatMap((l, i) => (l.ok ? [] : [{ p: i, ...(l.detail ?? {}) }]));
    const etcd = m && { ...m, wrongHolders: [...m.wrongHolders] };
    appendFileSync(
      join(dir, 'settle.log'),
      `${JSON.stringify({ t: Date.now() - since, procs, etcd })}\n`,
    );
  }

  /** What keeps etcd from agreeing, for the error of a run that did not settle. */
  private async diagnose(): Promise<string> {
    const m = await this.mismatches();
    const holders = [...m.wrongHolders].sort((a, b) => b[1] - a[1]).slice(0, 5);
    return (
      `${m.members} members registered, ${m.unclaimed} ranges unclaimed, ${m.wrong} held by a ` +
      `member that is not their desired owner (top holders: ${JSON.stringify(holders)})`
    );
  }

  /** Ranges not claimed by their desired owner in etcd, under etcd's member keys. */
  private async mismatches(): Promise<{
    total: number;
    members: number;
    unclaimed: number;
    wrong: number;
    wrongHolders: Map<string, number>;
    samples: Array<Record<string, unknown>>;
  }> {
    const root = `/granary/${this.name}/`;
    const members = await this.client.getAll().prefix(`${root}members/`).exec();
    const topology: Topology = {
      version: 0,
      members: members.kvs
        .map((kv) => decodeMember(kv.value.toString(), Number(kv.create_revision)))
        .sort((a, b) => (a.id < b.id ? -1 : 1)),
    };
    const claims = await this.client.getAll().prefix(`${root}shards/`).exec();
    const holders = new Map<string, string>();
    const keyOf = new Map<string, { rev: string; lease: string }>();
    for (const kv of claims.kvs) {
      const name = kv.key.toString().slice(`${root}shards/`.length);
      holders.set(name, holderOf(kv.value.toString()));
      keyOf.set(name, { rev: kv.create_revision, lease: kv.lease });
    }
    const samples: Array<Record<string, unknown>> = [];
    const s = this.shape.shardCount ?? DEFAULT_RANGES;
    const r = Math.min(s, this.shape.claimRanges ?? DEFAULT_RANGES);
    let unclaimed = 0;
    let wrong = 0;
    const wrongHolders = new Map<string, number>();
    for (const kind of this.shape.kinds) {
      for (let range = 0; range < r; range++) {
        const owner = ownerOf(kind, Math.ceil((range * s) / r), topology)?.id;
        const holder = holders.get(`${kind}/${range}`);
        if (holder !== owner && samples.length < 8) {
          samples.push({ kind, range, owner, holder, ...keyOf.get(`${kind}/${range}`) });
        }
        if (holder === undefined) unclaimed++;
        else if (holder !== owner) {
          wrong++;
          wrongHolders.set(holder, (wrongHolders.get(holder) ?? 0) + 1);
        }
      }
    }
    return {
      total: unclaimed + wrong,
      members: topology.members.length,
      unclaimed,
      wrong,
      wrongHolders,
      samples,
    };
  }

  /**
   * The claim audit: claim keys in etcd whose holder does not report holding them (with the key's
   * create revision as epoch). 0 is the invariant.
   */
  async orphans(): Promise<number> {
    const reported = new Map<string, number>();
    await Promise.all(
      this.procs.map(async (p) => {
        const from = p.lines.length;
        p.send({ cmd: 'state' });
        await p.waitFor((d) => d.type === 'state-end', 30_000, from);
        for (const l of p.lines.slice(from)) {
          if (l.data.type !== 'state') continue;
          const held = l.data.held as Record<string, Array<[number, number]>>;
          for (const [kind, list] of Object.entries(held)) {
            for (const [shard, epoch] of list) reported.set(`${l.data.id}:${kind}/${shard}`, epoch);
          }
        }
      }),
    );
    const root = `/granary/${this.name}/shards/`;
    const claims = await this.client.getAll().prefix(root).exec();
    const s = this.shape.shardCount ?? DEFAULT_RANGES;
    const r = Math.min(s, this.shape.claimRanges ?? DEFAULT_RANGES);
    let orphans = 0;
    for (const kv of claims.kvs) {
      const [kind, range] = kv.key.toString().slice(root.length).split('/') as [string, string];
      const shard = Math.ceil((Number(range) * s) / r);
      const epoch = reported.get(`${holderOf(kv.value.toString())}:${kind}/${shard}`);
      if (epoch !== Number(kv.create_revision)) orphans++;
    }
    return orphans;
  }

  /** Resets every process's longest-turn gauge. */
  resetTurns(): void {
    for (const p of this.procs) p.send({ cmd: 'turn-reset' });
  }

  /** The longest event-loop turn of any of `procs` (default all) since resetTurns(), in ms. */
  async maxTurnMs(procs: NodeProcess[] = this.procs): Promise<number> {
    const values = await Promise.all(
      procs.map(async (p) => {
        const from = p.lines.length;
        p.send({ cmd: 'turn-read' });
        return (await p.waitFor((d) => d.type === 'turn', 30_000, from)).data.maxMs as number;
      }),
    );
    return Math.max(...values);
  }

  /** Stops one process gracefully (its members leave). */
  async leave(proc: NodeProcess): Promise<void> {
    proc.send({ cmd: 'leave' });
    const deadline = Date.now() + 30_000;
    while (!proc.hasExited && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    if (!proc.hasExited) await proc.kill();
    this.procs.splice(this.procs.indexOf(proc), 1);
  }

  /** Kills every process and closes the etcd client. */
  async stop(): Promise<void> {
    await Promise.all(this.procs.map((p) => p.kill()));
    this.client.close();
  }
}

function holderOf(value: string): string {
  try {
    return (JSON.parse(value) as { member: string }).member;
  } catch {
    return '?';
  }
}

/** A member as etcd stores it (the provider's own JSON), for ownerOf. */
function decodeMember(value: string, incarnation: number): Member {
  const v = JSON.parse(value) as {
    id: string;
    address: string;
    kinds: string[];
    status: Member['status'];
    shards?: Record<string, [number, number]>;
  };
  const kindShards = Object.fromEntries(
    Object.entries(v.shards ?? {}).map(([k, [shardCount, ranges]]) => [k, { shardCount, ranges }]),
  );
  return {
    id: v.id,
    address: v.address,
    kinds: v.kinds,
    status: v.status,
    incarnation,
    kindShards,
  };
}

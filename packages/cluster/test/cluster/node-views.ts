import { join } from 'node:path';
import { Etcd3, type IWatchResponse, type Watcher } from 'etcd3';
import { NodeProcess, type NodeLine } from '@granary/testkit';
import type { Member, Topology } from '../../src/membership/topology';
import { ownerOf } from '../../src/placement/owner-of';

/** The compiled entry script of a node process. */
export const NODE_SCRIPT = join(__dirname, '../fixtures/cluster-node.js');

/** What one node process has reported so far, rebuilt from its JSON lines. */
export class NodeView {
  topology: Topology = { version: 0, members: [] };
  readonly held = new Map<number, number>();
  readonly acquiredCount = new Map<number, number>();
  /**
   * Epoch of each 'acquired' line per shard, in order: a shard acquired again has a new epoch; the
   * same epoch twice is one acquisition reported twice.
   */
  readonly acquiredEpochs = new Map<number, number[]>();
  leaseLost = 0;
  leaseRestored = 0;
  /** receivedAt of the line that last changed this view. */
  changedAt = 0;

  constructor(
    readonly id: string,
    readonly node: NodeProcess,
  ) {
    for (const line of node.lines) this.apply(line);
    node.onLine((line) => this.apply(line));
  }

  /** This node's incarnation in its own latest topology. */
  get incarnation(): number | undefined {
    return this.topology.members.find((m) => m.id === this.id)?.incarnation;
  }

  private apply(line: NodeLine): void {
    const d = line.data;
    this.changedAt = line.receivedAt;
    switch (d.type) {
      case 'ready':
      case 'topology':
        this.topology = { version: d.version as number, members: d.members as Member[] };
        break;
      case 'acquired':
        this.held.set(d.shard as number, d.epoch as number);
        this.acquiredCount.set(
          d.shard as number,
          (this.acquiredCount.get(d.shard as number) ?? 0) + 1,
        );
        this.acquiredEpochs.set(d.shard as number, [
          ...(this.acquiredEpochs.get(d.shard as number) ?? []),
          d.epoch as number,
        ]);
        break;
      case 'released':
        this.held.delete(d.shard as number);
        break;
      case 'lease-lost':
        this.leaseLost++;
        break;
      case 'lease-restored':
        this.leaseRestored++;
        break;
    }
  }
}

/** Spawns a node process (etcd provider unless `provider: 'seed'`) and waits until it is ready. */
export async function spawnNode(config: {
  provider?: 'etcd' | 'seed';
  endpoints?: string[];
  seed?: string | undefined;
  isSeed?: boolean;
  port?: number;
  ttlMs?: number;
  cluster: string;
  id: string;
  kind: string;
  shardCount: number;
  ttlSeconds?: number;
  keepAliveIntervalMs?: number;
  safetyMarginMs?: number;
}): Promise<NodeView> {
  const node = NodeProcess.spawn({ script: NODE_SCRIPT, config, label: config.id });
  await node.waitFor((d) => d.type === 'ready', 15_000);
  return new NodeView(config.id, node);
}

/** Resolves with the read time of the line after which `check()` held (checked per burst of lines). */
export function waitForViews(
  views: NodeView[],
  check: () => boolean,
  what: string,
  timeoutMs = 10_000,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const offs: Array<() => void> = [];
    const done = (err?: Error): void => {
      clearTimeout(timer);
      for (const off of offs) off();
      if (err) reject(err);
    };
    const timer = setTimeout(
      () => done(new Error(`timed out after ${timeoutMs} ms: ${what}`)),
      timeoutMs,
    );
    const recheck = (at: number): void => {
      if (check()) {
        done();
        resolve(at);
      }
    };
    // Lines come in bursts (one per shard): check once per burst, stamped with the burst's last
    // line, so the test process does not steal the CPU the nodes need.
    let scheduled = false;
    let lastAt = 0;
    const onLine = (at: number): void => {
      lastAt = at;
      if (scheduled) return;
      scheduled = true;
      setImmediate(() => {
        scheduled = false;
        recheck(lastAt);
      });
    };
    for (const v of views) offs.push(v.node.onLine((l) => onLine(l.receivedAt)));
    recheck(Date.now());
  });
}

/**
 * True when the views report the same topology (version; ids, incarnations and statuses) and
 * every shard is held by exactly one of them: its desired owner under that topology.
 */
export function viewsAgree(
  views: NodeView[],
  kind: string,
  shardCount: number,
  memberCount: number,
): boolean {
  const sig = (t: Topology): string =>
    t.members.map((m) => `${m.id}@${m.incarnation}:${m.status}`).join(',');
  const first = views[0].topology;
  if (first.members.length !== memberCount) return false;
  for (const v of views) {
    if (v.topology.version !== first.version || sig(v.topology) !== sig(first)) return false;
  }
  for (let s = 0; s < shardCount; s++) {
    const owner = ownerOf(kind, s, first)?.id;
    const holders = views.filter((v) => v.held.has(s));
    if (holders.length !== 1 || holders[0].id !== owner) return false;
  }
  return true;
}

/** Every change of the claim keys of one cluster, from an etcd watch started before the test. */
export class ClaimLog {
  readonly events: Array<{
    type: 'Put' | 'Delete';
    key: string;
    createRevision: number;
    revision: number;
    holder: string;
    /** Date.now() when the event was read. */
    at: number;
  }> = [];
  private watcher: Watcher | undefined;
  private readonly client: Etcd3;

  constructor(
    endpoints: string[],
    private readonly prefix: string,
  ) {
    this.client = new Etcd3({ hosts: endpoints });
  }

  /** Starts watching (resolves once the watch is established). */
  async start(): Promise<void> {
    this.watcher = await this.client.watch().prefix(this.prefix).withPreviousKV().create();
    this.watcher.on('data', (res: IWatchResponse) => {
      for (const ev of res.events) {
        const kv = ev.type === 'Put' ? ev.kv : (ev.prev_kv ?? ev.kv);
        let holder = '?';
        try {
          holder = (JSON.parse(kv.value.toString()) as { member: string }).member;
        } catch {
          // a delete without prev_kv: holder unknown
        }
        this.events.push({
          type: ev.type as 'Put' | 'Delete',
          key: ev.kv.key.toString(),
          createRevision: Number(kv.create_revision),
          revision: Number(ev.kv.mod_revision),
          holder,
          at: Date.now(),
        });
      }
    });
  }

  /**
   * Claims of one shard must never overlap in time: every Put creates the key (a new create
   * revision) while no claim exists, and every Delete ends the claim that exists. Returns the
   * violations found.
   */
  overlaps(): string[] {
    const live = new Map<string, { holder: string; createRevision: number }>();
    const problems: string[] = [];
    for (const e of this.events) {
      const cur = live.get(e.key);
      if (e.type === 'Put') {
        if (cur)
          problems.push(
            `${e.key}: put by ${e.holder} at ${e.revision} while held by ${cur.holder} since ${cur.createRevision}`,
          );
        if (e.createRevision !== e.revision)
          problems.push(`${e.key}: overwritten at ${e.revision} (created ${e.createRevision})`);
        live.set(e.key, { holder: e.holder, createRevision: e.createRevision });
      } else {
        live.delete(e.key);
      }
    }
    return problems;
  }

  /** Stops watching and closes the client. */
  async stop(): Promise<void> {
    await this.watcher?.cancel().catch(() => undefined);
    this.client.close();
  }
}

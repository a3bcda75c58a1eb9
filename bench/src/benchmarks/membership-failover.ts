import { join } from 'node:path';
import { ownerOf, type Member, type Topology } from '@granary/cluster';
import { NodeProcess, startEtcd, type EtcdHandle, type NodeLine } from '@granary/testkit';
import { defineBenchmark } from '../harness';

/** Shards of the benchmark kind: the default shardCount. */
const SHARDS = 256;
/** The EtcdProvider default lease TTL: what a production member would run with. */
const TTL_SECONDS = 3;
const KIND = 'K';
/** The node entry script of @granary/cluster's acceptance tests (built by `npm run build`). */
const NODE_SCRIPT = join(__dirname, '../../../packages/cluster/dist/test/fixtures/cluster-node.js');

let etcd: EtcdHandle;
let run = 0;

/** What one node process reported: its topology and the shards it holds. */
class Node {
  topology: Topology = { version: 0, members: [] };
  readonly held = new Set<number>();
  readonly acquired: number[] = [];
  constructor(
    readonly id: string,
    readonly proc: NodeProcess,
  ) {
    for (const l of proc.lines) this.apply(l);
    proc.onLine((l) => this.apply(l));
  }
  private apply(l: NodeLine): void {
    const d = l.data;
    if (d.type === 'ready' || d.type === 'topology') {
      this.topology = { version: d.version as number, members: d.members as Member[] };
    } else if (d.type === 'acquired') {
      this.held.add(d.shard as number);
      this.acquired.push(d.shard as number);
    } else if (d.type === 'released') {
      this.held.delete(d.shard as number);
    }
  }
}

async function spawn(cluster: string, id: string): Promise<Node> {
  const config = {
    endpoints: etcd.endpoints,
    cluster,
    id,
    kind: KIND,
    shardCount: SHARDS,
    ttlSeconds: TTL_SECONDS,
  };
  const proc = NodeProcess.spawn({ script: NODE_SCRIPT, config, label: id });
  await proc.waitFor((d) => d.type === 'ready', 15_000);
  return new Node(id, proc);
}

/** Every node sees `count` members and every shard is held once, by its desired owner. */
function agreed(nodes: Node[], count: number): boolean {
  const t = nodes[0].topology;
  if (t.members.length !== count || nodes.some((n) => n.topology.version !== t.version))
    return false;
  for (let s = 0; s < SHARDS; s++) {
    const holders = nodes.filter((n) => n.held.has(s));
    if (holders.length !== 1 || holders[0].id !== ownerOf(KIND, s, t)?.id) return false;
  }
  return true;
}

/** Resolves with the read time of the line after which `check()` holds. */
function until(nodes: Node[], check: () => boolean, timeoutMs = 30_000): Promise<number> {
  return new Promise((resolve, reject) => {
    const offs: Array<() => void> = [];
    const finish = (at?: number): void => {
      clearTimeout(timer);
      for (const off of offs) off();
      if (at === undefined) reject(new Error(`no agreement within ${timeoutMs} ms`));
      else resolve(at);
    };
    const timer = setTimeout(() => finish(), timeoutMs);
    for (const n of nodes) offs.push(n.proc.onLine((l) => check() && finish(l.receivedAt)));
    if (check()) finish(Date.now());
  });
}

async function threeNodes(): Promise<{ cluster: string; nodes: Node[] }> {
  const cluster = `bench${++run}`;
  const suffix = Math.random().toString(36).slice(2, 8);
  const nodes = await Promise.all(['a', 'b', 'c'].map((n) => spawn(cluster, `${n}-${suffix}`)));
  await until(nodes, () => agreed(nodes, 3));
  return { cluster, nodes };
}

export const benchmark = defineBenchmark({
  name: 'membership-failover',
  description:
    'EtcdProvider, 3 node processes, 256 shards, ttlSeconds 3: ms from SIGKILL of one member until the survivors hold all shards; fraction of shards that change owner when a 4th member joins (random member ids per run)',
  warmup: 0,
  async setup() {
    etcd = await startEtcd();
  },
  async teardown() {
    await etcd.stop();
  },
  cases: [
    {
      id: 'sigkill-to-all-reclaimed',
      metric: 'ms',
      async run() {
        const { nodes } = await threeNodes();
        const [victim, ...survivors] = nodes;
        const killedAt = Date.now();
        await victim.proc.kill();
        const doneAt = await until(survivors, () => agreed(survivors, 2));
        await Promise.all(survivors.map((n) => n.proc.kill()));
        return doneAt - killedAt;
      },
    },
    {
      id: 'join-moved-fraction',
      metric: 'fraction',
      async run() {
        const { cluster, nodes } = await threeNodes();
        const before = new Map<number, string>();
        for (const n of nodes) for (const s of n.held) before.set(s, n.id);
        const fourth = await spawn(cluster, `d-${Math.random().toString(36).slice(2, 8)}`);
        const all = [...nodes, fourth];
        await until(all, () => agreed(all, 4));
        let moved = 0;
        for (const n of all) for (const s of n.held) if (before.get(s) !== n.id) moved++;
        await Promise.all(all.map((n) => n.proc.kill()));
        return moved / SHARDS;
      },
    },
  ],
});

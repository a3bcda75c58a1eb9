import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import {
  NodeProcess,
  startEtcdCluster,
  startRedis,
  startTcpProxy,
  startTestNetwork,
  testNetworkUnavailable,
  type EtcdClusterHandle,
  type RedisHandle,
  type TcpProxyHandle,
  type TestNetwork,
} from '@granary/testkit';
import { RedisStateStore } from '../../src/state/redis/redis-state-store';
import type { CounterState, LoadOutcome, WriteRecord } from './fixtures/chaos-protocol';
import { COUNTER_KIND } from './fixtures/chaos-protocol';

/** Shared secret of the chaos cluster's members (non-loopback remotes need one). */
const SECRET = 'chaos-test-secret-0123456789abcdef';
const NODE_SCRIPT = path.join(__dirname, 'fixtures/chaos-node.js');
const LOAD_SCRIPT = path.join(__dirname, 'fixtures/chaos-load.js');

/** Sizes of a chaos run. */
export interface ChaosClusterOptions {
  nodes: number;
  shardCount: number;
}

/**
 * The chaos test's world: a 3-member etcd and a Redis from the testkit, `nodes` member processes
 * (each in its own network namespace when this process may make them, so one can be partitioned;
 * etcd and Redis are then reached through TCP proxies on the test network's gateway), and the
 * load process. It restarts nodes, keeps every incarnation's lines, and tears everything down.
 */
export class ChaosCluster {
  readonly procs: NodeProcess[][] = [];
  readonly downs: Array<{ node: string; at: number }> = [];
  readonly dir = mkdtempSync(path.join(tmpdir(), 'granary-chaos-'));
  readonly networkSkipped: string | undefined;
  load: NodeProcess | undefined;
  private readonly proxies: TcpProxyHandle[] = [];
  private nodeEtcd: string[] = [];
  private nodeRedis = '';

  private constructor(
    readonly options: ChaosClusterOptions,
    readonly etcd: EtcdClusterHandle,
    readonly redis: RedisHandle,
    readonly net: TestNetwork | undefined,
  ) {
    this.networkSkipped = net === undefined ? testNetworkUnavailable() : undefined;
  }

  static async start(options: ChaosClusterOptions): Promise<ChaosCluster> {
    const etcd = await startEtcdCluster();
    const redis = await startRedis();
    const net =
      testNetworkUnavailable() === undefined ? startTestNetwork(options.nodes) : undefined;
    const c = new ChaosCluster(options, etcd, redis, net);
    if (net === undefined) {
      c.nodeEtcd = etcd.endpoints;
      c.nodeRedis = redis.url;
    } else {
      for (const target of [...etcd.endpoints, `127.0.0.1:${redis.port}`]) {
        c.proxies.push(await startTcpProxy({ target, host: net.gateway }));
      }
      c.nodeEtcd = c.proxies.slice(0, -1).map((p) => p.url);
      c.nodeRedis = `redis://${net.gateway}:${c.proxies[c.proxies.length - 1]!.port}`;
    }
    await Promise.all(Array.from({ length: options.nodes }, (_, i) => c.startNode(i)));
    return c;
  }

  /** Member id of node `i`. */
  id(i: number): string {
    return `node-${i}`;
  }

  /** The running process of node `i`. */
  node(i: number): NodeProcess {
    const list = this.procs[i]!;
    return list[list.length - 1]!;
  }

  /** Starts (or restarts) node `i` and waits until it is ready. */
  async startNode(i: number): Promise<void> {
    const host = this.net?.hosts[i];
    const proc = NodeProcess.spawn({
      script: NODE_SCRIPT,
      exec: host?.exec,
      label: this.id(i),
      config: {
        etcdEndpoints: this.nodeEtcd,
        redisUrl: this.nodeRedis,
        id: this.id(i),
        cluster: 'chaos',
        host: host?.ip ?? '127.0.0.1',
        secret: SECRET,
        shardCount: this.options.shardCount,
        writesFile: path.join(this.dir, `writes-${this.id(i)}.ndjson`),
      },
    });
    (this.procs[i] ??= []).push(proc);
    await proc.waitFor((l) => l.type === 'ready', 30_000);
  }

  /** SIGKILL node `i` (recorded: its activations end here). */
  async kill(i: number): Promise<void> {
    this.downs.push({ node: this.id(i), at: Date.now() });
    await this.node(i).kill();
  }

  /** Resolves once every running node's latest view lists all `nodes` members. */
  async converged(timeoutMs = 30_000): Promise<void> {
    const want = Array.from({ length: this.options.nodes }, (_, i) => this.id(i));
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const ok = this.procs.every((list) => {
        const views = list[list.length - 1]!.lines.filter((l) => l.data.type === 'topology');
        const members = (views[views.length - 1]?.data.members ?? []) as string[];
        return want.every((m) => members.includes(m));
      });
      if (ok) return;
      if (Date.now() > deadline) throw new Error(`nodes did not all see ${want.join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Starts the load process and waits for its first acknowledged calls. */
  async startLoad(config: Record<string, unknown>): Promise<NodeProcess> {
    const load = NodeProcess.spawn({
      script: LOAD_SCRIPT,
      label: 'load',
      config: {
        ...config,
        etcdEndpoints: this.etcd.endpoints,
        id: 'load',
        cluster: 'chaos',
        host: this.net?.gateway ?? '127.0.0.1',
        secret: SECRET,
        outcomeFile: path.join(this.dir, 'outcome.json'),
      },
    });
    this.load = load;
    await load.waitFor((l) => l.type === 'ready', 30_000);
    await load.waitFor((l) => l.type === 'progress' && (l.ok as number) > 0, 30_000);
    return load;
  }

  /** Every line of every node incarnation, in arrival order per process. */
  nodeLines(): Array<Record<string, unknown>> {
    return this.procs.flat().flatMap((p) => p.lines.map((l) => l.data));
  }

  /** Every accepted write the nodes recorded. */
  writes(): WriteRecord[] {
    return readdirSync(this.dir)
      .filter((f) => f.startsWith('writes-'))
      .flatMap((f) =>
        readFileSync(path.join(this.dir, f), 'utf8')
          .split('\n')
          .filter((line) => line.length > 0)
          .map((line) => JSON.parse(line) as WriteRecord),
      );
  }

  /** What the load process wrote when it stopped. */
  loadOutcome(): LoadOutcome {
    return JSON.parse(readFileSync(path.join(this.dir, 'outcome.json'), 'utf8')) as LoadOutcome;
  }

  /** The counters' stored states, read straight from Redis. */
  async finalStates(grains: number): Promise<Map<string, CounterState | undefined>> {
    const store = new RedisStateStore({ url: this.redis.url });
    try {
      const out = new Map<string, CounterState | undefined>();
      for (let g = 0; g < grains; g++) {
        const id = `g-${g}`;
        const record = await store.read(COUNTER_KIND, id);
        out.set(
          id,
          record === undefined || record === null
            ? undefined
            : (JSON.parse(Buffer.from(record.state).toString('utf8')) as CounterState),
        );
      }
      return out;
    } finally {
      await store.close();
    }
  }

  /** Stops everything it started. */
  async stop(): Promise<void> {
    await Promise.all([
      ...this.procs.flat().map((p) => (p.hasExited ? undefined : p.kill())),
      this.load && !this.load.hasExited ? this.load.kill() : undefined,
    ]);
    await Promise.all(this.proxies.map((p) => p.close()));
    await this.redis.stop();
    await this.etcd.stop();
    this.net?.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

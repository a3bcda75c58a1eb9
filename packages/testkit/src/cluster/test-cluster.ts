import { startEtcd, type EtcdHandle } from '../etcd';
import { TestkitError } from '../errors';
import { NodeProcess } from './node-process';

/** How often convergence is re-checked while waiting (topology lines arrive as events too). */
const CONVERGE_POLL_MS = 20;

/** What TestCluster needs to know of a member's view: its topology version and member ids. */
export interface TopologyView {
  version: number;
  members: ReadonlyArray<{ id: string }>;
}

/** An in-process node as the start function returns it (e.g. a wrapped Cluster). */
export interface InProcessNode {
  /** The view this node has of the cluster right now. */
  topology(): TopologyView;
  /** Graceful leave. */
  stop(): Promise<void>;
  /** A crash (e.g. a non-graceful shutdown); defaults to stop(). */
  kill?(): Promise<void>;
}

/** Where a node gets its membership from; what TestCluster starts for it. */
export interface NodeContext {
  /** 0-based index in the order nodes were added. */
  index: number;
  /** Member id: `node-<index>`. */
  id: string;
  /** Endpoints of the etcd TestCluster started (with `etcd: true`). */
  etcdEndpoints: string[] | undefined;
}

/** Options of TestCluster.start(). */
export interface TestClusterOptions {
  /** Nodes started at once. */
  size: number;
  /**
   * Start a real etcd on a free loopback port for the nodes (the etcd provider).
   * @default false
   */
  etcd?: boolean;
  /**
   * In-process nodes: starts one node (the memory or seed provider keeps state in this process).
   * Exactly one of `startNode` and `script` is required.
   */
  startNode?: (ctx: NodeContext) => Promise<InProcessNode>;
  /**
   * Child-process nodes: a compiled entry script run with node; it gets `config(ctx)` as JSON
   * in argv[2] and prints JSON lines, among them `{ type: 'topology', version, members }`.
   */
  script?: string;
  /**
   * The JSON config of a child-process node.
   * @default the NodeContext itself
   */
  config?: (ctx: NodeContext) => unknown;
  /**
   * How long start()/addNode() wait until every node sees the same topology.
   * @default 15000
   */
  convergeTimeoutMs?: number;
}

/** One node of a TestCluster. */
export interface TestClusterNode {
  readonly id: string;
  readonly index: number;
  /** The child process (child-process mode). */
  readonly process: NodeProcess | undefined;
  /** The node the start function returned (in-process mode). */
  readonly handle: InProcessNode | undefined;
  /** False after stop/kill. */
  alive: boolean;
}

/**
 * N cluster nodes for tests, after Orleans' TestCluster: in-process (through a start function,
 * so the testkit never imports @granary/cluster) or as child processes (an entry script by
 * path), with the memory, seed or etcd provider. start() waits until every node sees the same
 * topology; kill (SIGKILL), pause/resume (SIGSTOP/SIGCONT), addNode and stop drive failures.
 *
 * @example
 * const tc = await TestCluster.start({ size: 3, etcd: true, script: join(__dirname, 'node.js') });
 * await tc.kill(tc.nodes[2]);
 * await tc.waitForConvergence();
 * await tc.stop();
 */
export class TestCluster {
  readonly nodes: TestClusterNode[] = [];
  private readonly views = new Map<TestClusterNode, TopologyView>();

  private constructor(
    private readonly options: TestClusterOptions,
    /** The etcd the nodes use (with `etcd: true`). */
    readonly etcd: EtcdHandle | undefined,
  ) {}

  /** Starts etcd (if asked) and `size` nodes, and waits until they agree on the topology. */
  static async start(options: TestClusterOptions): Promise<TestCluster> {
    if ((options.startNode === undefined) === (options.script === undefined)) {
      throw new TestkitError('TestCluster: give exactly one of startNode and script');
    }
    const etcd = options.etcd ? await startEtcd() : undefined;
    const tc = new TestCluster(options, etcd);
    try {
      await Promise.all(Array.from({ length: options.size }, () => tc.launch()));
      await tc.waitForConvergence();
    } catch (err) {
      await tc.stop();
      throw err;
    }
    return tc;
  }

  /** Nodes still running. */
  get live(): TestClusterNode[] {
    return this.nodes.filter((n) => n.alive);
  }

  /** Adds one node and waits for convergence. */
  async addNode(): Promise<TestClusterNode> {
    const node = await this.launch();
    await this.waitForConvergence();
    return node;
  }

  /** SIGKILL (child) or the node's kill() (in-process). */
  async kill(node: TestClusterNode): Promise<void> {
    node.alive = false;
    if (node.process) await node.process.kill();
    else await (node.handle!.kill ?? node.handle!.stop).call(node.handle);
  }

  /** Graceful stop of one node (SIGTERM for a child). */
  async stopNode(node: TestClusterNode): Promise<void> {
    node.alive = false;
    if (node.process) await node.process.stop();
    else await node.handle!.stop();
  }

  /** SIGSTOP: the node freezes (child-process nodes only). */
  pause(node: TestClusterNode): void {
    this.child(node, 'pause').pause();
  }

  /** SIGCONT after pause(). */
  resume(node: TestClusterNode): void {
    this.child(node, 'resume').resume();
  }

  /** Resolves once every live node reports the same topology version listing all live nodes. */
  async waitForConvergence(timeoutMs = this.options.convergeTimeoutMs ?? 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.converged()) return;
      if (Date.now() > deadline) {
        const seen = this.live.map((n) => `${n.id}@v${this.viewOf(n)?.version ?? '?'}`);
        throw new TestkitError(
          `TestCluster: no common topology within ${timeoutMs} ms (${seen.join(', ')})`,
        );
      }
      await new Promise((r) => setTimeout(r, CONVERGE_POLL_MS));
    }
  }

  /** Stops every live node gracefully (in parallel), then etcd. */
  async stop(): Promise<void> {
    await Promise.allSettled(this.live.map((n) => this.stopNode(n)));
    await this.etcd?.stop();
  }

  /** Same version everywhere, every live node listed, no stopped node listed (others may be). */
  private converged(): boolean {
    const live = this.live;
    const gone = new Set(this.nodes.filter((n) => !n.alive).map((n) => n.id));
    let version: number | undefined;
    for (const n of live) {
      const v = this.viewOf(n);
      if (v === undefined) return false;
      if (version !== undefined && v.version !== version) return false;
      version = v.version;
      const ids = new Set(v.members.map((m) => m.id));
      if (!live.every((l) => ids.has(l.id)) || [...ids].some((id) => gone.has(id))) return false;
    }
    return true;
  }

  private viewOf(node: TestClusterNode): TopologyView | undefined {
    return node.handle ? node.handle.topology() : this.views.get(node);
  }

  private async launch(): Promise<TestClusterNode> {
    const index = this.nodes.length;
    const ctx: NodeContext = { index, id: `node-${index}`, etcdEndpoints: this.etcd?.endpoints };
    const o = this.options;
    if (o.startNode) {
      const entry: TestClusterNode = {
        id: ctx.id,
        index,
        process: undefined,
        handle: undefined,
        alive: true,
      };
      this.nodes.push(entry);
      (entry as { handle: InProcessNode }).handle = await o.startNode(ctx);
      return entry;
    }
    const child = NodeProcess.spawn({
      script: o.script!,
      config: o.config ? o.config(ctx) : ctx,
      label: ctx.id,
    });
    const entry: TestClusterNode = {
      id: ctx.id,
      index,
      process: child,
      handle: undefined,
      alive: true,
    };
    this.nodes.push(entry);
    child.onLine(({ data }) => {
      if (data.type === 'topology' || data.type === 'ready') {
        const view = data as unknown as TopologyView;
        if (Array.isArray(view.members)) this.views.set(entry, view);
      }
    });
    await child.waitFor((d) => d.type === 'ready', o.convergeTimeoutMs ?? 15_000);
    return entry;
  }

  private child(node: TestClusterNode, op: string): NodeProcess {
    if (!node.process)
      throw new TestkitError(`TestCluster.${op}: only child-process nodes can ${op}`);
    return node.process;
  }
}

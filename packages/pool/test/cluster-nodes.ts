import { Cluster, MemoryClusterTable, MemoryProvider, type KindDefinition } from '@granary/cluster';
import { silentLogger, waitUntil } from '@granary/testkit';

/** Members of one in-process cluster (MemoryProvider, real gRPC remote on loopback). */
export class ClusterNodes {
  readonly table = new MemoryClusterTable();
  readonly nodes: Cluster[] = [];
  /** Live activations (all members), kept from the activation log. */
  live = 0;
  /** Called on every activation event. */
  private readonly listeners = new Set<() => void>();

  constructor(private readonly kinds: (memberId: string) => KindDefinition[]) {}

  async add(id: string): Promise<Cluster> {
    const c = await Cluster.start({
      name: 'pool-test',
      id,
      provider: new MemoryProvider(this.table, { ttlMs: 1000 }),
      kinds: this.kinds(id),
      remote: { host: '127.0.0.1', port: 0 },
      claimRetryMs: 100,
      requestTimeoutMs: 3000,
      logger: silentLogger,
      onActivation: (e) => {
        this.live += e.type === 'activate' ? 1 : -1;
        for (const l of [...this.listeners]) l();
      },
    });
    this.nodes.push(c);
    await this.converged();
    return c;
  }

  /** A crash: the member stops renewing its lease and its remote goes away without goodbye. */
  async crash(id: string): Promise<void> {
    const i = this.nodes.findIndex((n) => n.self?.id === id);
    const victim = this.nodes[i]!;
    (victim.provider as MemoryProvider).crash();
    await victim.system.shutdown();
    this.nodes.splice(i, 1);
    await this.converged();
  }

  /** A graceful leave: the member deactivates its grains and leaves the cluster. */
  async leave(id: string): Promise<void> {
    const i = this.nodes.findIndex((n) => n.self?.id === id);
    const leaving = this.nodes[i]!;
    this.nodes.splice(i, 1);
    await leaving.shutdown({ graceful: true });
    await this.converged();
  }

  /** Resolves once every live member sees the same up members (re-checked on each topology event). */
  converged(timeoutMs = 10_000): Promise<void> {
    const live = this.nodes;
    const ids = live
      .map((n) => n.self?.id)
      .sort()
      .join(',');
    const ok = (): boolean =>
      live.every(
        (n) =>
          n.topology.members
            .filter((m) => m.status === 'up')
            .map((m) => m.id)
            .sort()
            .join(',') === ids,
      );
    const on = live.map((n) => (l: () => void) => n.on('topology', l));
    return waitUntil(ok, `members agree on ${ids}`, { on, timeoutMs });
  }

  /** Resolves once `live` equals `n` (checked on every activation event); bounded. */
  untilLive(n: number, timeoutMs = 10_000): Promise<void> {
    const onActivation = (l: () => void): (() => void) => {
      this.listeners.add(l);
      return () => this.listeners.delete(l);
    };
    return waitUntil(() => this.live === n, `${n} live activations (have ${this.live})`, {
      on: [onActivation],
      timeoutMs,
    });
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.shutdown({ graceful: false })));
    this.nodes.length = 0;
  }
}

import { Cluster, MemoryClusterTable, MemoryProvider, type KindDefinition } from '@granary/cluster';

const quiet = {
  debug: (): void => undefined,
  info: (): void => undefined,
  warn: (): void => undefined,
  error: (): void => undefined,
};

/** Members of one in-process cluster (MemoryProvider, real gRPC remote on loopback). */
export class ClusterNodes {
  readonly table = new MemoryClusterTable();
  readonly nodes: Cluster[] = [];
  /** Live activations (all members), kept from the activation log. */
  live = 0;
  private readonly waiters: Array<() => void> = [];

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
      logger: quiet,
      onActivation: (e) => {
        this.live += e.type === 'activate' ? 1 : -1;
        for (const w of this.waiters.splice(0)) w();
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
    return new Promise((resolve, reject) => {
      const offs: Array<() => void> = [];
      const done = (err?: Error): void => {
        clearTimeout(timer);
        offs.forEach((off) => off());
        if (err) reject(err);
        else resolve();
      };
      const timer = setTimeout(() => done(new Error(`members did not agree on ${ids}`)), timeoutMs);
      for (const n of live) offs.push(n.on('topology', () => setImmediate(() => ok() && done())));
      if (ok()) done();
    });
  }

  /** Resolves once `live` equals `n` (checked on every activation event); bounded. */
  async untilLive(n: number, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.live !== n) {
      if (Date.now() > deadline)
        throw new Error(`expected ${n} live activations, have ${this.live}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, timeoutMs).unref();
      });
    }
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.shutdown({ graceful: false })));
    this.nodes.length = 0;
  }
}

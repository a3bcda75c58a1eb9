import { errorsOnlyLogger } from '@granary/testkit';
import { Cluster } from '../../src/cluster';
import type { ActivationEvent } from '../../src/grains/grains-options';
import type { KindDefinition } from '../../src/grains/kind';
import type { ClusterProvider } from '../../src/providers/cluster-provider';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';
import { ownerOf } from '../../src/placement/owner-of';
import { waitForClusters } from '../cluster/converge';

/**
 * Several members in this process, each with its own remote: over one MemoryClusterTable, or
 * over the provider `options.provider` makes per member (e.g. an EtcdProvider on a real etcd).
 */
export class MemoryNodes {
  readonly table = new MemoryClusterTable();
  readonly nodes: Cluster[] = [];
  readonly log: ActivationEvent[] = [];

  constructor(
    private readonly kinds: () => KindDefinition[],
    private readonly options: {
      ttlMs?: number;
      requestTimeoutMs?: number;
      provider?: (() => ClusterProvider) | undefined;
      /** Record every activation and deactivation in `log` (off for runs of millions). */
      activationLog?: boolean;
    } = {},
  ) {}

  async add(id = `n${this.nodes.length + 1}`, kinds = this.kinds()): Promise<Cluster> {
    const c = await Cluster.start({
      name: 'grains-test',
      id,
      provider:
        this.options.provider?.() ??
        new MemoryProvider(this.table, { ttlMs: this.options.ttlMs ?? 1000 }),
      kinds,
      remote: { host: '127.0.0.1', port: 0 },
      claimRetryMs: 100,
      requestTimeoutMs: this.options.requestTimeoutMs ?? 3000,
      onActivation: this.options.activationLog === false ? undefined : (e) => this.log.push(e),
      logger: quiet,
    });
    this.nodes.push(c);
    await this.converged();
    return c;
  }

  /** Every live member sees the same topology and every shard of every kind is held once. */
  converged(timeoutMs = 5000): Promise<void> {
    const live = this.nodes.filter((n) => n.self !== undefined);
    return waitForClusters(
      live,
      () => {
        const v = live[0]!.topology.version;
        if (!live.every((n) => n.topology.version === v)) return false;
        for (const k of this.kinds()) {
          const count = live[0]!.shardCountOf(k.name);
          for (let s = 0; s < count; s++) {
            const held = live.filter((n) => n.canServe(k.name, s));
            if (held.length !== 1 || held[0]!.id !== ownerOf(k.name, s, held[0]!.topology)?.id)
              return false;
          }
        }
        return true;
      },
      'members agree and every shard is held once',
      timeoutMs,
    );
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.shutdown({ graceful: false })));
    this.nodes.length = 0;
  }
}

/** Test members log errors only (peers killed on purpose make the remote warn). */
export const quiet = errorsOnlyLogger;

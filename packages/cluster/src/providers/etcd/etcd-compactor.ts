import type { Etcd3 } from 'etcd3';
import type { ClusterLogger } from '../../internal/logger';
import type { Topology } from '../../membership/topology';

/**
 * Bounds etcd's history: every `intervalMs` the cluster's first `up` member (by id, so exactly
 * one compacts when the members agree) compacts etcd to the revision it read one interval
 * earlier. History between one and two intervals old is kept, enough for a watch that
 * reconnects to resume; older revisions (every claim move of every deploy) are dropped, so etcd's
 * database stops growing with the cluster's age and never reaches its quota (2 GiB by default).
 * etcd reuses the freed pages; `etcdctl defrag` returns them to the file system.
 */
export class EtcdCompactor {
  private timer: NodeJS.Timeout | undefined;
  private previous = 0;
  /**
   * The revision history is known compacted to. An idle cluster's revision does not move (lease
   * keep-alives write nothing), and compacting to the same revision again made etcd log a
   * warning ("required revision has been compacted") every interval, for ever.
   */
  private compacted = 0;

  constructor(
    private readonly client: () => Etcd3,
    private readonly selfId: string,
    private readonly topology: () => Topology,
    private readonly intervalMs: number,
    private readonly timeoutMs: number,
    private readonly logger: ClusterLogger,
  ) {}

  /** Starts compacting (no-op with a zero interval). */
  start(): void {
    if (this.intervalMs <= 0) return;
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async tick(): Promise<void> {
    const first = this.topology().members.find((m) => m.status === 'up');
    if (first?.id !== this.selfId) {
      this.previous = 0;
      return;
    }
    try {
      const client = this.client();
      const res = await client.kv.range(
        { key: Buffer.from(`\0granary-compaction-probe`), count_only: true },
        { deadline: Date.now() + this.timeoutMs },
      );
      const current = Number(res.header.revision);
      if (this.previous > this.compacted) {
        await client.kv.compact(
          { revision: String(this.previous) },
          { deadline: Date.now() + this.timeoutMs },
        );
        this.compacted = this.previous;
        this.logger.debug({ revision: this.previous, current }, 'etcd history compacted');
      }
      this.previous = current;
    } catch (err) {
      // Compacted further already (another member, or etcd's own auto-compaction): fine.
      if (/compacted/.test(String(err))) {
        this.compacted = Math.max(this.compacted, this.previous);
        return;
      }
      this.logger.warn({ err }, 'etcd compaction failed; the next interval retries');
    }
  }
}

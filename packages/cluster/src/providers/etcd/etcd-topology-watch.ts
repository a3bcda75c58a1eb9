import type { Etcd3, IKeyValue, IWatchResponse, Watcher } from 'etcd3';
import type { ClusterLogger } from '../../internal/logger';
import { Listeners } from '../../internal/listeners';
import { EMPTY_TOPOLOGY, sortMembers, type Member, type Topology } from '../../membership/topology';
import type { ClaimReleased } from '../cluster-provider';
import { decodeMember, prefixEnd, type EtcdKeys } from './etcd-keys';

/** Backoff of the watch stream's reconnects: short and capped, so a member catches up fast. */
const WATCH_BACKOFF_INITIAL_MS = 50;
/** Cap of the watch reconnect backoff. */
const WATCH_BACKOFF_MAX_MS = 500;

/** cockatiel's IBackoff shape, which etcd3 uses for watch reconnects. */
export interface WatchBackoff {
  readonly duration: number;
  next(): WatchBackoff;
}

/** Exponential backoff from WATCH_BACKOFF_INITIAL_MS, capped at WATCH_BACKOFF_MAX_MS. */
export function watchBackoff(duration = WATCH_BACKOFF_INITIAL_MS): WatchBackoff {
  return { duration, next: () => watchBackoff(Math.min(duration * 2, WATCH_BACKOFF_MAX_MS)) };
}

/**
 * The topology of one cluster, from a range read of the member keys and then one watch on the
 * cluster root (members and claims). A member's incarnation is its key's create revision; the
 * topology version is the revision of the last member change applied, so members that have seen
 * the same events report the same version. Claim deletions are reported for waiting owners.
 */
export class EtcdTopologyWatch {
  private readonly members = new Map<string, Member>();
  private current: Topology = EMPTY_TOPOLOGY;
  private watcher: Watcher | undefined;
  readonly topologyListeners = new Listeners<Topology>();
  readonly releaseListeners = new Listeners<ClaimReleased>();
  /** Members that wrote a note to this one (a let-go request), by sender id. */
  readonly noteListeners = new Listeners<string>();

  constructor(
    private readonly client: Etcd3,
    private readonly keys: EtcdKeys,
    private readonly logger: ClusterLogger,
    private readonly requestTimeoutMs: number,
    private readonly selfId: string,
  ) {}

  /** The latest topology. */
  topology(): Topology {
    return this.current;
  }

  /** Loads the members and starts watching from the revision after the load. */
  async start(): Promise<void> {
    const res = await this.client.kv.range(
      { key: Buffer.from(this.keys.members), range_end: prefixEnd(this.keys.members) },
      { deadline: Date.now() + this.requestTimeoutMs },
    );
    let version = 0;
    for (const kv of res.kvs) {
      const m = decodeMember(kv);
      if (m) this.members.set(m.id, m);
      version = Math.max(version, Number(kv.mod_revision));
    }
    this.publish(version);
    const watcher = this.client
      .watch()
      .prefix(this.keys.root)
      .withPreviousKV()
      .startRevision(String(Number(res.header.revision) + 1))
      .watcher();
    watcher.on('data', (r) => this.apply(r));
    watcher.on('disconnected', (err) =>
      this.logger.debug({ err }, 'etcd watch disconnected; resuming'),
    );
    watcher.on('error', (err) => this.logger.warn({ err }, 'etcd watch error'));
    this.watcher = watcher;
    // Joined means "sees changes": wait for the watch to be live (it resumes from the load
    // revision either way, so a slow start only delays events, it loses none).
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.logger.warn(
          { timeoutMs: this.requestTimeoutMs },
          'etcd watch not live yet; continuing',
        );
        resolve();
      }, this.requestTimeoutMs);
      watcher.once('connected', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Stops watching. */
  async stop(): Promise<void> {
    const w = this.watcher;
    this.watcher = undefined;
    this.topologyListeners.clear();
    this.releaseListeners.clear();
    this.noteListeners.clear();
    await w?.cancel().catch(() => undefined);
  }

  private apply(res: IWatchResponse): void {
    let memberChange = 0;
    for (const ev of res.events) {
      const parsed = this.keys.parse(ev.kv.key);
      if (!parsed) continue;
      if (parsed.type === 'member') {
        if (ev.type === 'Put') {
          const m = decodeMember(ev.kv);
          if (m) this.members.set(parsed.id, m);
        } else {
          this.members.delete(parsed.id);
        }
        memberChange = Number(ev.kv.mod_revision);
      } else if (parsed.type === 'note') {
        if (ev.type === 'Put' && parsed.to === this.selfId) this.noteListeners.emit(parsed.from);
      } else if (ev.type === 'Delete') {
        const prev: IKeyValue | undefined = ev.prev_kv ?? undefined;
        this.releaseListeners.emit({
          kind: parsed.kind,
          shard: parsed.shard,
          epoch: prev ? Number(prev.create_revision) : 0,
        });
      }
    }
    if (memberChange > this.current.version) this.publish(memberChange);
  }

  private publish(version: number): void {
    this.current = Object.freeze({
      version: Math.max(version, this.current.version),
      members: Object.freeze(sortMembers(this.members.values())),
    });
    this.topologyListeners.emit(this.current);
  }
}

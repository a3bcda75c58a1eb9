import type { Etcd3, IEvent } from 'etcd3';
import type { ClusterLogger } from '../../internal/logger';
import { Listeners } from '../../internal/listeners';
import { EMPTY_TOPOLOGY, sortMembers, type Member, type Topology } from '../../membership/topology';
import { decodeMember, prefixEnd, type EtcdKeys } from './etcd-keys';
import { decodeNote, type Note } from './etcd-notes';
import { EtcdWatchStream } from './etcd-watch-stream';

/** A note to this member as the watch saw it. */
export interface ReceivedNote {
  from: string;
  note: Note;
  key: Buffer;
  modRevision: string;
}

/**
 * The topology of one cluster, from a range read of the member keys and then watches (one etcd
 * watch stream, EtcdWatchStream) of the member keys and of this member's notes only: a member
 * never watches claim keys, so a claim write reaches nobody, and the events of one membership
 * change grow with the members, not with kinds x shards. A member's incarnation is its key's
 * create revision; the topology version is the revision of the last member change applied, so
 * members that have seen the same events report the same version.
 */
export class EtcdTopologyWatch {
  private readonly members = new Map<string, Member>();
  private current: Topology = EMPTY_TOPOLOGY;
  private stream: EtcdWatchStream | undefined;
  readonly topologyListeners = new Listeners<Topology>();
  /** Notes written to this member (hand-offs, let-go requests). */
  readonly noteListeners = new Listeners<ReceivedNote>();

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
  async start(readTimeoutMs = this.requestTimeoutMs): Promise<void> {
    const revision = await this.load(readTimeoutMs);
    const notes = this.keys.notesTo(this.selfId);
    this.stream = new EtcdWatchStream(
      this.client,
      [
        {
          key: Buffer.from(this.keys.members),
          rangeEnd: prefixEnd(this.keys.members),
          startRevision: revision + 1,
          onEvents: (events) => this.applyMembers(events),
          onCompacted: () => this.load(),
        },
        {
          key: Buffer.from(notes),
          rangeEnd: prefixEnd(notes),
          startRevision: revision + 1,
          onEvents: (events) => this.applyNotes(events),
          // A missed note is a missed nudge: the retry tick and the audit cover it.
          onCompacted: async (compacted) => compacted,
        },
      ],
      this.logger,
      this.requestTimeoutMs,
    );
    // Joined means "sees changes": wait for the watches to be live (they resume from the load
    // revision either way, so a slow start only delays events, it loses none).
    try {
      await this.stream.start(this.requestTimeoutMs);
    } catch (err) {
      // Not left open: a caller that retries start() opens another.
      this.stream.stop();
      this.stream = undefined;
      throw err;
    }
  }

  /** Stops watching. */
  async stop(): Promise<void> {
    this.stream?.stop();
    this.stream = undefined;
    this.topologyListeners.clear();
    this.noteListeners.clear();
  }

  /**
   * Reads every member key and replaces the member table with it (at start, and when the watch's
   * resume point was compacted away); returns the read's revision.
   */
  private async load(timeoutMs = this.requestTimeoutMs): Promise<number> {
    const res = await this.client.kv.range(
      { key: Buffer.from(this.keys.members), range_end: prefixEnd(this.keys.members) },
      { deadline: Date.now() + timeoutMs },
    );
    const before = new Set(this.members.keys());
    this.members.clear();
    let version = 0;
    for (const kv of res.kvs) {
      const m = decodeMember(kv);
      if (m) this.members.set(m.id, m);
      version = Math.max(version, Number(kv.mod_revision));
    }
    // A member deleted while unseen leaves no key to date it: the read's revision stands in.
    const revision = Number(res.header.revision);
    if ([...before].some((id) => !this.members.has(id))) version = revision;
    this.publish(version);
    return revision;
  }

  private applyMembers(events: IEvent[]): void {
    let memberChange = 0;
    for (const ev of events) {
      const parsed = this.keys.parse(ev.kv.key);
      if (parsed?.type !== 'member') continue;
      if (ev.type === 'Put') {
        const m = decodeMember(ev.kv);
        if (m) this.members.set(parsed.id, m);
      } else {
        this.members.delete(parsed.id);
      }
      memberChange = Number(ev.kv.mod_revision);
    }
    if (memberChange > this.current.version) this.publish(memberChange);
  }

  private applyNotes(events: IEvent[]): void {
    for (const ev of events) {
      const parsed = this.keys.parse(ev.kv.key);
      if (ev.type !== 'Put' || parsed?.type !== 'note' || parsed.to !== this.selfId) continue;
      this.noteListeners.emit({
        from: parsed.from,
        note: decodeNote(ev.kv.value),
        key: ev.kv.key,
        modRevision: ev.kv.mod_revision,
      });
    }
  }

  private publish(version: number): void {
    this.current = Object.freeze({
      version: Math.max(version, this.current.version),
      members: Object.freeze(sortMembers(this.members.values())),
    });
    this.topologyListeners.emit(this.current);
  }
}

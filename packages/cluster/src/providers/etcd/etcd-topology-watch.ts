import type { Etcd3, IEvent, IKeyValue } from 'etcd3';
import { LogThrottle } from '@granary/core';
import { MembershipRecordRejectedError } from '../../errors';
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
 * Rejected member records are logged one by one up to this many per interval, then counted: a
 * writer flooding the prefix with bad keys costs a few lines, not one per key.
 */
const REJECT_LOG_BURST = 4;
/** The interval of that throttle (ms). */
const REJECT_LOG_INTERVAL_MS = 10_000;

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
  private readonly rejects: LogThrottle;
  /** Records ignored since start: member records left out (malformed, another's id), bad notes. */
  rejectedRecords = 0;
  readonly topologyListeners = new Listeners<Topology>();
  /** Notes written to this member (hand-offs, let-go requests). */
  readonly noteListeners = new Listeners<ReceivedNote>();

  constructor(
    private readonly client: Etcd3,
    private readonly keys: EtcdKeys,
    private readonly logger: ClusterLogger,
    private readonly requestTimeoutMs: number,
    private readonly selfId: string,
  ) {
    this.rejects = new LogThrottle(logger, REJECT_LOG_INTERVAL_MS, undefined, REJECT_LOG_BURST);
  }

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
    this.rejects.close();
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
      const m = this.member(kv);
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
      const m = ev.type === 'Put' ? this.member(ev.kv) : undefined;
      // A key rewritten with a bad value is no member any more, as a fresh read would find.
      if (m) this.members.set(m.id, m);
      else {
        this.members.delete(parsed.id);
      }
      memberChange = Number(ev.kv.mod_revision);
    }
    if (memberChange > this.current.version) this.publish(memberChange);
  }

  /** The member a member key holds, or undefined (logged, counted) if it holds none. */
  private member(kv: IKeyValue): Member | undefined {
    const parsed = this.keys.parse(kv.key);
    if (parsed?.type !== 'member') return undefined;
    const decoded = decodeMember(kv, parsed.id);
    if (decoded.problem === undefined) return decoded.member;
    this.reject(kv, decoded.problem, 'left out of the topology');
    return undefined;
  }

  /** Logs (throttled) and counts a record that is not well formed. */
  private reject(kv: IKeyValue, reason: string, outcome: string): void {
    this.rejectedRecords++;
    const key = kv.key.toString().slice(0, 256);
    const err = new MembershipRecordRejectedError(key, reason, outcome);
    this.rejects.log('rejected-record', 'warn', { err, key }, err.message);
  }

  private applyNotes(events: IEvent[]): void {
    for (const ev of events) {
      const parsed = this.keys.parse(ev.kv.key);
      if (ev.type !== 'Put' || parsed?.type !== 'note' || parsed.to !== this.selfId) continue;
      const { note, problem } = decodeNote(ev.kv.value);
      if (problem !== undefined) this.reject(ev.kv, problem, 'partly ignored');
      this.noteListeners.emit({
        from: parsed.from,
        note,
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

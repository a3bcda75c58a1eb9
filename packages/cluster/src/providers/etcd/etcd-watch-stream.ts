import type { Etcd3, IDuplexStream, IEvent, IWatchRequest, IWatchResponse } from 'etcd3';
import type { ClusterLogger } from '../../internal/logger';

/** First pause before reopening a failed watch stream (the first reopen after a while is at once). */
const REOPEN_BACKOFF_INITIAL_MS = 50;
/** Cap of that pause: a member catches up within this long of etcd answering again. */
const REOPEN_BACKOFF_MAX_MS = 500;
/**
 * How often an idle stream asks etcd for a progress report. A stream on a hung or partitioned
 * etcd member stays open and silent; without an answer within `probeTimeoutMs` it is reopened
 * (on another member).
 */
const PROBE_INTERVAL_MS = 2000;
/** How etcd says a stream's auth token is unknown (expired, or issued before etcd restarted). */
const INVALID_TOKEN = /invalid auth token/i;

/** One watched key range on the stream. */
export interface WatchSpec {
  key: Buffer;
  rangeEnd: Buffer;
  /** The first revision to deliver. */
  startRevision: number;
  /** Whether Delete events carry the previous value. */
  prevKv?: boolean;
  /** Events of one etcd response, in revision order. */
  onEvents(events: IEvent[]): void;
  /**
   * The revision to resume from was compacted away: rebuild the state from a fresh read and
   * return the revision of that read (watching resumes after it).
   */
  onCompacted(compactRevision: number): Promise<number>;
}

interface Watched {
  spec: WatchSpec;
  /** Revision of the last event delivered (0: none yet; resume from spec.startRevision). */
  lastRevision: number;
  id: string | undefined;
}

/**
 * Watches a few key ranges over one etcd watch stream, and resumes each after a failure from the
 * revision after the last event it delivered: no event is skipped or delivered twice. (The etcd3
 * client's own watcher resumes from the revision of the last response *header*, which during a
 * catch-up is ahead of the events sent so far, so a stream that breaks mid-catch-up loses events.)
 * A stream that stays silent past a progress probe is reopened on another member; a resume point
 * that was compacted away is rebuilt through `onCompacted`.
 */
export class EtcdWatchStream {
  private readonly watched: Watched[];
  private stream: IDuplexStream<IWatchRequest, IWatchResponse> | undefined;
  /** Watches created in order on the current stream, waiting for their `created` reply. */
  private pending: Watched[] = [];
  private probeTimer: NodeJS.Timeout | undefined;
  private probeSentAt: number | undefined;
  private lastHeardAt = 0;
  private reopenDelay = REOPEN_BACKOFF_INITIAL_MS;
  private lastFailureAt = -Infinity;
  private stopped = false;
  /** etcd refused the token the last stream opened with: get a fresh one before reopening. */
  private staleToken = false;
  private connectedWaiters: Array<() => void> = [];

  constructor(
    private readonly client: Etcd3,
    specs: WatchSpec[],
    private readonly logger: ClusterLogger,
    private readonly probeTimeoutMs: number,
  ) {
    this.watched = specs.map((spec) => ({ spec, lastRevision: 0, id: undefined }));
  }

  /** Opens the stream; resolves once every watch is created (or after `timeoutMs` regardless). */
  async start(timeoutMs: number): Promise<void> {
    const created = new Promise<void>((resolve) => this.connectedWaiters.push(resolve));
    void this.open();
    this.probeTimer = setInterval(() => this.probe(), PROBE_INTERVAL_MS / 2);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      created,
      new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          this.logger.warn({ timeoutMs }, 'etcd watch not live yet; continuing');
          resolve();
        }, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
  }

  /** Closes the stream for good. */
  stop(): void {
    this.stopped = true;
    clearInterval(this.probeTimer);
    this.stream?.cancel();
    this.stream = undefined;
  }

  private async open(): Promise<void> {
    if (this.stopped) return;
    let stream: IDuplexStream<IWatchRequest, IWatchResponse>;
    try {
      if (this.staleToken) await this.refreshToken();
      stream = await this.client.watchClient.watch();
    } catch (err) {
      this.fail(undefined, err);
      return;
    }
    if (this.stopped) {
      stream.cancel();
      return;
    }
    this.stream = stream;
    this.lastHeardAt = Date.now();
    this.probeSentAt = undefined;
    stream.on('data', (res) => this.onResponse(stream, res));
    stream.on('error', (err) => this.fail(stream, err));
    stream.on('end', () => this.fail(stream, new Error('etcd watch stream ended')));
    this.pending = [];
    for (const w of this.watched) this.create(stream, w);
  }

  private create(stream: IDuplexStream<IWatchRequest, IWatchResponse>, w: Watched): void {
    w.id = undefined;
    this.pending.push(w);
    const start = w.lastRevision > 0 ? w.lastRevision + 1 : w.spec.startRevision;
    stream.write({
      create_request: {
        key: w.spec.key,
        range_end: w.spec.rangeEnd,
        start_revision: String(start),
        prev_kv: w.spec.prevKv ?? false,
      },
    });
  }

  private onResponse(
    stream: IDuplexStream<IWatchRequest, IWatchResponse>,
    res: IWatchResponse,
  ): void {
    if (stream !== this.stream) return;
    this.lastHeardAt = Date.now();
    this.probeSentAt = undefined;
    if (res.created) {
      const w = this.pending.shift();
      if (w) w.id = String(res.watch_id);
      if (this.pending.length === 0) {
        this.reopenDelay = REOPEN_BACKOFF_INITIAL_MS;
        for (const resolve of this.connectedWaiters.splice(0)) resolve();
      }
      if (!res.canceled) return;
    }
    const w = this.watched.find((x) => x.id === String(res.watch_id));
    if (!w) return; // a progress report for the whole stream, or a watch we no longer have
    if (res.canceled) {
      const compacted = Number(res.compact_revision);
      if (compacted > 0) {
        void this.recover(stream, w, compacted);
        return;
      }
      // Cancelled for another reason: an auth token etcd no longer knows (it expired, or etcd
      // restarted: simple tokens live in its memory), a permission revoked. Watching again on
      // this stream was cancelled again at once, in a loop that never ended (147,000 warnings
      // in 20 s after an etcd restart with auth on, and no event ever again): the stream is
      // reopened with the failure back-off instead, on a fresh token when etcd refused the old.
      const reason = res.cancel_reason;
      this.logger.warn({ reason }, 'etcd cancelled a watch; reopening the watch stream');
      if (INVALID_TOKEN.test(reason)) this.staleToken = true;
      this.fail(stream, new Error(`etcd cancelled a watch: ${reason}`));
      return;
    }
    if (res.events.length === 0) return;
    w.lastRevision = Math.max(
      w.lastRevision,
      Number(res.events[res.events.length - 1].kv.mod_revision),
    );
    w.spec.onEvents(res.events);
  }

  /** A watch whose resume point etcd compacted away: rebuild, then watch again on this stream. */
  private async recover(
    stream: IDuplexStream<IWatchRequest, IWatchResponse>,
    w: Watched,
    compactRevision: number,
  ): Promise<void> {
    w.id = undefined;
    this.logger.warn({ compactRevision }, 'etcd watch resume point compacted; re-reading');
    try {
      w.lastRevision = await w.spec.onCompacted(compactRevision);
    } catch (err) {
      this.fail(stream, err);
      return;
    }
    if (stream === this.stream) this.create(stream, w);
  }

  /**
   * Makes the client authenticate again. The etcd3 client renews its token when a unary call is
   * refused for it, not when a stream is, and a new stream reuses the token it holds: one read
   * of a watched key (within the member's permissions) renews it for the next stream.
   */
  private async refreshToken(): Promise<void> {
    const key = this.watched[0]?.spec.key;
    if (key !== undefined) await this.client.get(key).exec();
    this.staleToken = false;
  }

  /** Asks an idle stream for a progress report; reopens one that did not answer the last ask. */
  private probe(): void {
    const stream = this.stream;
    if (!stream || this.stopped) return;
    const now = Date.now();
    if (this.probeSentAt !== undefined && now - this.probeSentAt > this.probeTimeoutMs) {
      this.fail(
        stream,
        new Error(`etcd watch silent for ${this.probeTimeoutMs} ms after a progress request`),
      );
      return;
    }
    if (this.probeSentAt === undefined && now - this.lastHeardAt >= PROBE_INTERVAL_MS) {
      this.probeSentAt = now;
      stream.write({ progress_request: {} });
    }
  }

  private fail(
    stream: IDuplexStream<IWatchRequest, IWatchResponse> | undefined,
    err: unknown,
  ): void {
    if (stream !== this.stream || this.stopped) return;
    this.stream = undefined;
    stream?.cancel();
    this.logger.debug({ err }, 'etcd watch stream failed; resuming');
    const now = Date.now();
    const recent = now - this.lastFailureAt < REOPEN_BACKOFF_MAX_MS * 2;
    const delay = recent ? this.reopenDelay : 0;
    this.reopenDelay = recent
      ? Math.min(this.reopenDelay * 2, REOPEN_BACKOFF_MAX_MS)
      : REOPEN_BACKOFF_INITIAL_MS;
    this.lastFailureAt = now;
    setTimeout(() => void this.open(), delay);
  }
}

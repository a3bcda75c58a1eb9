import type { RemoteLogger } from './logger';

/** Counters of wire events, each also logged (throttled): what `remote.stats` shows. */
export interface RemoteStats {
  /** Frames that could not be decoded (the stream was closed). */
  corruptFrames: number;
  /** Handshakes this node refused (or that timed out), and peers' refusals of ours. */
  refusedHandshakes: number;
  /** Links closed because the peer exceeded a limit (RemoteLimitError). */
  limitExceeded: number;
  /** Inbound connections closed at once (maxConnections) or to make room (maxPendingConnections). */
  refusedConnections: number;
  /** Inbound connections closed for having no authenticated link (idleConnectionTimeoutMs). */
  idleConnections: number;
  /**
   * Inbound connections that sent bytes and ended before any use (no authenticated link; at a
   * gateway, no whole call), other than those closed for a limit: HTTP/1 or TLS sent to the
   * port, garbage, a peer gone mid-handshake. gRPC's HTTP/2 layer closes such bytes at once.
   */
  closedBeforeUse: number;
  /** Links closed because the peer stopped reading (PeerNotReadingError). */
  peersNotReading: number;
  /** Links replaced after their path was lost and came back (LinkLostError). */
  linksLost: number;
  /**
   * Messages a peer may not send (a remote Stop of a `$` system actor, a forged watcher, a
   * system message that does not decode).
   */
  forbiddenMessages: number;
  /** Connect attempts that failed (the peer unreachable or refusing). */
  unreachableEndpoints: number;
  /** Endpoints removed: down longer than endpointDownTtlMs, or evicted at maxEndpoints. */
  removedEndpoints: number;
  /** Large messages failed with RemoteBackpressureError. */
  backpressureRejections: number;
}

/** One of the counters of {@link RemoteStats}. */
export type RemoteEventKind = keyof RemoteStats;

/** Every counter at zero (a remote not started yet). */
export function zeroStats(): RemoteStats {
  return {
    corruptFrames: 0,
    refusedHandshakes: 0,
    limitExceeded: 0,
    refusedConnections: 0,
    idleConnections: 0,
    closedBeforeUse: 0,
    peersNotReading: 0,
    linksLost: 0,
    forbiddenMessages: 0,
    unreachableEndpoints: 0,
    removedEndpoints: 0,
    backpressureRejections: 0,
  };
}

interface Window {
  level: 'debug' | 'info' | 'warn' | 'error';
  msg: string;
  suppressed: number;
  timer: NodeJS.Timeout;
}

/**
 * Counts wire events and logs them without letting a flood through: the first event of a kind
 * is logged as it is, later ones in the same interval only counted, and at the end of the
 * interval one summary line says how many there were. A peer opening 2,000 bad connections
 * costs two lines per interval, not 2,000.
 */
export class EventLog {
  readonly stats: RemoteStats = zeroStats();
  private readonly windows = new Map<RemoteEventKind, Window>();

  constructor(
    private readonly logger: RemoteLogger,
    private readonly intervalMs: number,
  ) {}

  /** Counts one event of `kind` and logs it unless one of its kind was logged this interval. */
  report(
    kind: RemoteEventKind,
    level: Window['level'],
    fields: Record<string, unknown>,
    msg: string,
  ): void {
    this.stats[kind]++;
    const w = this.windows.get(kind);
    if (w !== undefined) {
      w.suppressed++;
      return;
    }
    this.logger[level]({ ...fields, event: kind }, msg);
    this.open(kind, level, msg);
  }

  /** Logs what is still suppressed and stops the timers (the remote is shutting down). */
  close(): void {
    for (const [kind, w] of this.windows) {
      clearTimeout(w.timer);
      this.summarize(kind, w);
    }
    this.windows.clear();
  }

  private open(kind: RemoteEventKind, level: Window['level'], msg: string): void {
    const timer = setTimeout(() => {
      const w = this.windows.get(kind)!;
      this.windows.delete(kind);
      // A flood that goes on keeps one summary line per interval.
      if (this.summarize(kind, w)) this.open(kind, w.level, w.msg);
    }, this.intervalMs);
    timer.unref();
    this.windows.set(kind, { level, msg, suppressed: 0, timer });
  }

  private summarize(kind: RemoteEventKind, w: Window): boolean {
    if (w.suppressed === 0) return false;
    this.logger[w.level](
      { event: kind, count: w.suppressed, intervalMs: this.intervalMs, total: this.stats[kind] },
      `${w.msg} (${w.suppressed} more like it in ${this.intervalMs} ms, not logged one by one)`,
    );
    return true;
  }
}

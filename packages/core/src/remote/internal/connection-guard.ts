import * as net from 'node:net';
import type { EventLog } from './event-log';
import { listenError } from '../../internal/listen-error';

/**
 * The inbound connection bounds of RemoteLimits. A server that closes idle connections itself
 * (the gRPC gateway, through grpc-js) and has no authentication to wait for gives no
 * `idleConnectionTimeoutMs` or gives it for connections not yet used: a connection is pending
 * until the server calls `proven` (the gateway: at its first whole call).
 */
export interface ConnectionLimits {
  maxConnections: number;
  maxPendingConnections?: number;
  idleConnectionTimeoutMs?: number;
  /**
   * At `maxConnections`, close the oldest connection not yet proven (of the source holding the
   * most) to make room for the new one, and refuse only when every open one is proven. For a
   * server that can tell a client from a flood only once it has made a call (the gateway).
   */
  evictUnprovenAtMax?: boolean;
  /**
   * Streams a connection may start that no handshake authenticates (refused, cancelled, still
   * pending), at once or one after another; the next one closes the connection (see
   * `streamStarted`). Undefined: no bound (a server without handshakes: the gateway).
   */
  maxStreamsPerConnection?: number;
}

/** Where the guard counts and logs (throttled) the connections it closes. */
export type ConnectionEvents = Pick<EventLog, 'report'>;

/** How the guard names its server and options in what it logs. */
export interface ConnectionGuardNames {
  /** 'remote' or 'gateway': the start of each line. */
  server: string;
  /** The option that bounds `key`, as its user writes it. */
  option: (key: keyof ConnectionLimits) => string;
  /** What makes a connection used, in the idle line: 'an authenticated link' by default. */
  use?: string;
}

/** The remote's names: its bounds are `limits.*` of RemoteOptions. */
const REMOTE_NAMES: ConnectionGuardNames = {
  server: 'remote',
  option: (key) => `limits.${key}`,
};

interface Connection {
  readonly socket: net.Socket;
  readonly key: string;
  /** The peer's IP address: connections without a link are evicted per source. */
  readonly source: string;
  /** Authenticated links open on it. */
  links: number;
  /** Streams started on it that no handshake authenticated (see `streamStarted`). */
  unproven: number;
  idle: NodeJS.Timeout | undefined;
  /** An authenticated link opened on it, or (gateway) a whole call arrived: it was used. */
  used: boolean;
  /** Closed by the guard for a limit (counted there). */
  dropped: boolean;
}

/**
 * Accepts the node's TCP connections itself and hands them to gRPC, so it can bound them:
 * at most `maxConnections` open (more are closed as they arrive), at most
 * `maxPendingConnections` without an authenticated link, and none without an authenticated
 * link for longer than `idleConnectionTimeoutMs`. At the pending bound the oldest connection of
 * the source address holding the most pending ones is closed: evicting the oldest overall let
 * a peer that opens connections faster than a member completes its handshake (a slow link, a
 * busy node) close the member's every attempt; now a flood from one address evicts its own.
 * With `evictUnprovenAtMax` the same choice makes room at `maxConnections`.
 */
export class ConnectionGuard {
  private readonly server: net.Server;
  private readonly connections = new Map<string, Connection>();
  /** Connections without an authenticated link, by source address, oldest first. */
  private readonly pending = new Map<string, Set<Connection>>();
  private pendingCount = 0;

  constructor(
    private readonly limits: ConnectionLimits,
    private readonly inject: (socket: net.Socket) => void,
    private readonly events: ConnectionEvents,
    private readonly names: ConnectionGuardNames = REMOTE_NAMES,
  ) {
    // No Nagle delay: frames are written whole and at once (grpc-js' client sockets do the
    // same); a reply must not wait for the next one to fill a segment.
    this.server = net.createServer({ noDelay: true }, (socket) => this.accept(socket));
  }

  /** Binds host:port; resolves with the bound port. */
  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const failed = (err: Error): void => reject(listenError('', host, port, err));
      this.server.once('error', failed);
      this.server.listen({ host, port, exclusive: true }, () => {
        this.server.off('error', failed);
        resolve((this.server.address() as net.AddressInfo).port);
      });
    });
  }

  /**
   * A stream started on the connection `peer`; false when the connection is closed, or was
   * closed for it: it started more than `maxStreamsPerConnection` streams that no handshake
   * authenticated (HTTP/2 hands over the streams of data read before the close, too). Each
   * costs the node a call, a link and a handshake, and a stream a peer resets at once frees its
   * place under HTTP/2's bound on concurrent streams: one connection opening and resetting
   * streams (HTTP/2 "rapid reset") held the loop for a second at a time, thousands of streams a
   * second, until its connection's idle close. A member authenticates the one stream it opens
   * on a connection.
   */
  streamStarted(peer: string): boolean {
    const bound = this.limits.maxStreamsPerConnection;
    if (bound === undefined) return true;
    const c = this.connections.get(peer);
    if (c === undefined) return false;
    if (++c.unproven <= bound) return true;
    const limit = this.names.option('maxStreamsPerConnection');
    this.events.report(
      'limitExceeded',
      'warn',
      { peer, limit },
      `${this.names.server} connection closed: it started more than ${bound} streams that no handshake authenticated (${limit})`,
    );
    this.drop(c);
    return false;
  }

  /** An authenticated link opened on the connection `peer` (`address:port`, as grpc-js names it). */
  linkOpened(peer: string): void {
    const c = this.connections.get(peer);
    if (c === undefined) return;
    if (c.unproven > 0) c.unproven--;
    c.links++;
    c.used = true;
    this.unpend(c);
    if (c.idle) clearTimeout(c.idle);
    c.idle = undefined;
  }

  /** An authenticated link on `peer` ended; without links the connection is idle again. */
  linkClosed(peer: string): void {
    const c = this.connections.get(peer);
    if (c === undefined || --c.links > 0) return;
    this.armIdle(c);
  }

  /**
   * Closes the connection `peer` if it has no authenticated link: its peer broke a limit
   * before authenticating, and HTTP/2 would otherwise keep taking what it sends on the stream.
   */
  dropUnauthenticated(peer: string): void {
    const c = this.connections.get(peer);
    if (c !== undefined && c.links === 0) this.drop(c);
  }

  /**
   * The connection `peer` proved itself (a gateway client sent a whole call): it is no longer
   * pending, so a flood at `maxConnections` never evicts it.
   */
  proven(peer: string): void {
    const c = this.connections.get(peer);
    if (c === undefined) return;
    c.used = true;
    this.unpend(c);
    if (c.idle) clearTimeout(c.idle);
    c.idle = undefined;
  }

  /**
   * A call opened on the connection `peer` (a gateway's): the idle timer stops, the server's own
   * HTTP/2 idle timer now applies; it stays pending (evictable) until `proven`.
   */
  callOpened(peer: string): void {
    const c = this.connections.get(peer);
    if (c?.idle === undefined) return;
    clearTimeout(c.idle);
    c.idle = undefined;
  }

  /** Open connections (for stats and tests). */
  get size(): number {
    return this.connections.size;
  }

  /** Stops accepting and closes every connection still open. */
  close(): Promise<void> {
    for (const c of this.connections.values()) c.socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: net.Socket): void {
    const key = `${socket.remoteAddress}:${socket.remotePort}`;
    const { maxConnections, maxPendingConnections } = this.limits;
    if (this.connections.size >= maxConnections && this.limits.evictUnprovenAtMax === true) {
      if (this.pendingCount > 0) this.makeRoom('maxConnections', maxConnections, 'are open');
    }
    if (this.connections.size >= maxConnections) {
      const limit = this.names.option('maxConnections');
      this.events.report(
        'refusedConnections',
        'warn',
        { peer: key, limit },
        `${this.names.server} connection refused: ${maxConnections} are open (${limit})`,
      );
      socket.destroy();
      return;
    }
    if (maxPendingConnections !== undefined && this.pendingCount >= maxPendingConnections) {
      this.makeRoom('maxPendingConnections', maxPendingConnections, 'are not authenticated');
    }
    const c: Connection = {
      socket,
      key,
      source: socket.remoteAddress ?? '',
      links: 0,
      unproven: 0,
      idle: undefined,
      used: false,
      dropped: false,
    };
    this.connections.set(key, c);
    socket.on('close', () => this.closed(c));
    socket.on('error', () => undefined); // the close that follows does the bookkeeping
    this.armIdle(c);
    this.inject(socket);
  }

  /** Closes the oldest pending connection of the busiest source, at the bound `key`. */
  private makeRoom(key: keyof ConnectionLimits, bound: number, what: string): void {
    const oldest = this.oldestOfBusiestSource();
    const limit = this.names.option(key);
    this.events.report(
      'refusedConnections',
      'warn',
      { peer: oldest.key, limit },
      `${this.names.server} connection closed to make room: ${bound} ${what} (${limit})`,
    );
    this.drop(oldest);
  }

  /** The pending connection to close at the bound (there is one: the bound is at least 1). */
  private oldestOfBusiestSource(): Connection {
    let busiest: Set<Connection> | undefined;
    for (const set of this.pending.values()) {
      if (busiest === undefined || set.size > busiest.size) busiest = set;
    }
    return busiest!.values().next().value!;
  }

  private pend(c: Connection): void {
    let set = this.pending.get(c.source);
    if (set === undefined) this.pending.set(c.source, (set = new Set()));
    if (set.has(c)) return;
    set.add(c);
    this.pendingCount++;
  }

  private unpend(c: Connection): void {
    const set = this.pending.get(c.source);
    if (set === undefined || !set.delete(c)) return;
    this.pendingCount--;
    if (set.size === 0) this.pending.delete(c.source);
  }

  private armIdle(c: Connection): void {
    this.pend(c);
    const timeoutMs = this.limits.idleConnectionTimeoutMs;
    if (timeoutMs === undefined) return;
    if (c.idle) clearTimeout(c.idle);
    c.idle = setTimeout(() => {
      const limit = this.names.option('idleConnectionTimeoutMs');
      this.events.report(
        'idleConnections',
        'info',
        { peer: c.key },
        `${this.names.server} connection closed: no ${this.names.use ?? 'authenticated link'} ` +
          `for ${timeoutMs} ms (${limit})`,
      );
      this.drop(c);
    }, timeoutMs);
    c.idle.unref();
  }

  /**
   * A connection ended. One that sent bytes and was never used, nor closed here for a limit,
   * sent what gRPC's HTTP/2 layer refuses (it closes at once): counted, no bytes: a TCP probe.
   */
  private closed(c: Connection): void {
    this.forget(c);
    if (c.used || c.dropped || c.socket.bytesRead === 0) return;
    this.events.report(
      'closedBeforeUse',
      'info',
      { peer: c.key, bytes: c.socket.bytesRead },
      `${this.names.server} connection ended before any use (not a gRPC client's, or one gone mid-handshake)`,
    );
  }

  private drop(c: Connection): void {
    c.dropped = true;
    this.forget(c);
    c.socket.destroy();
  }

  private forget(c: Connection): void {
    if (c.idle) clearTimeout(c.idle);
    c.idle = undefined;
    this.unpend(c);
    if (this.connections.get(c.key) === c) this.connections.delete(c.key);
  }
}

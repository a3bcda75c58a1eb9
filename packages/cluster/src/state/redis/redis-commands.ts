import { LogThrottle } from '@granary/core';
import type { Cluster, Redis } from 'ioredis';
import type { ClusterLogger } from '../../internal/logger';
import { StateStoreError, StateUnavailableError, StateWriteRefusedError } from '../errors';
import { DurabilityShortfall } from './durable-ack';
import { NotConnected } from './not-connected';
import { sendable } from './sendable';
import { SilentConnection } from './silent-connection';
import { TRANSIENT_REPLIES, WRITE_REFUSED_REPLIES } from './transient-replies';

type ScriptFn = (...args: (string | number | Uint8Array)[]) => Promise<(number | string)[]>;
/** The client with the store's scripts defined on it (ioredis defineCommand). */
export type ScriptClient = (Redis | Cluster) & Record<string, ScriptFn>;
/** Losses of the connection (and returns) are logged once per this (ms), then counted. */
const OUTAGE_LOG_INTERVAL_MS = 10_000;
/** Errors of commands never sent (the client was not connected within commandTimeoutMs). */
const NOT_SENT = new WeakSet<Error>();
/** What a command was for, in error messages. */
export type Operation = 'read' | 'write' | 'clear' | 'open';

/**
 * The store's connection: runs each command once the client is ready, bounded by
 * `commandTimeoutMs`, with errors mapped to the state errors; logs outages once; counts
 * connections (a WAIT must go out on the connection that carried the write) and reports each
 * reconnection (the store then checks that the server kept its data and its settings).
 */
export class RedisCommands {
  private readyWait: Promise<void> | undefined;
  private generation = 0;
  private everReady = false;
  /** Dials again when the connection stops answering (only for the store's own client). */
  private readonly silence: SilentConnection | undefined;
  private readonly outageLog: LogThrottle;
  private readonly notConnected: NotConnected;

  constructor(
    readonly client: ScriptClient,
    /** True when the store created the client (its own commandTimeout bounds every command). */
    ownsClient: boolean,
    private readonly commandTimeoutMs: number,
    logger: ClusterLogger,
    keyPrefix: string,
    /** Called on every 'ready' after the first (a restarted Redis, a failover). */
    onReconnect: () => void,
  ) {
    this.silence = ownsClient
      ? new SilentConnection(client, logger, { keyPrefix }, commandTimeoutMs)
      : undefined;
    // A connection that flaps (a server that stays a replica is dialled again every few
    // seconds) logs its first loss and return per window, then counts them.
    const log = new LogThrottle(logger, OUTAGE_LOG_INTERVAL_MS);
    this.outageLog = log;
    this.notConnected = new NotConnected(client);
    let down = false;
    const lost = (detail: string): void => {
      if (down) return;
      down = true;
      log.log(
        'lost',
        'warn',
        { detail, keyPrefix },
        'state store lost Redis; calls fail with StateUnavailableError until it is back',
      );
    };
    // 'reconnecting' follows a closed connection; 'error' also covers a first connect that fails.
    client.on('reconnecting', () => lost('connection closed'));
    client.on('error', (err: Error) => {
      lost(err.message);
      // Why Redis refuses the connection, once per window per kind of reply (NOAUTH,
      // WRONGPASS...). A socket error (ECONNREFUSED while Redis is down) says no more than
      // the 'lost' line already did.
      const reply = /^[A-Z]+\b/.exec(err.message)?.[0];
      if (client.status !== 'ready' && reply !== undefined) {
        log.log(
          `why:${reply}`,
          'warn',
          { detail: err.message, keyPrefix },
          'state store cannot use Redis',
        );
      }
    });
    client.on('close', () => void this.generation++);
    client.on('ready', () => {
      if (this.everReady) onReconnect();
      this.everReady = true;
      if (!down) return;
      down = false;
      log.log('back', 'info', { keyPrefix }, 'state store reconnected to Redis');
    });
  }

  /** Flushes the outage log's pending summaries (the store is closing). */
  close(): void {
    this.outageLog.close();
  }

  /** Grows every time the connection closes: equal generations mean the same connection. */
  get connection(): number {
    return this.generation;
  }

  /** Runs one command once the client is ready, bounded by commandTimeoutMs, errors mapped. */
  async run<T>(kind: string, id: string, op: Operation, command: () => Promise<T>): Promise<T> {
    let mark = -1;
    try {
      // A socket our own dial is closing is waited out as a connection not yet made.
      if (!sendable(this.client)) await this.waitReady();
      if (this.silence === undefined) return await this.bounded(command());
      mark = this.silence.mark;
      const result = await command();
      this.silence.settled(mark);
      return result;
    } catch (err) {
      if (mark >= 0) this.silence!.settled(mark, err);
      throw this.mapError(kind, id, op, err);
    }
  }

  /**
   * Waits for the client to (re)connect, at most commandTimeoutMs. One shared wait per outage
   * so a thousand callers add one listener, not a thousand.
   */
  private waitReady(): Promise<void> {
    if (this.client.status === 'end') {
      return Promise.reject(new Error('Redis client is closed (status end)'));
    }
    if (this.client.status === 'wait') void this.client.connect().catch(() => {});
    this.readyWait ??= new Promise<void>((resolve, reject) => {
      const onReady = (): void => {
        clearTimeout(timer);
        this.readyWait = undefined;
        resolve();
      };
      const timer = setTimeout(() => {
        this.client.off('ready', onReady);
        this.readyWait = undefined;
        const err = new Error(this.notConnected.message());
        NOT_SENT.add(err);
        reject(err);
      }, this.commandTimeoutMs);
      this.client.once('ready', onReady);
    });
    return this.readyWait;
  }

  /** For a client passed in, whose own options may let a command wait forever. */
  private bounded<T>(promise: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('Command timed out')), this.commandTimeoutMs);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  }

  private mapError(kind: string, id: string, op: Operation, err: unknown): Error {
    const message = err instanceof Error ? err.message : String(err);
    // A command never sent (no connection) wrote nothing.
    const outcome =
      op === 'read' || op === 'open' || NOT_SENT.has(err as Error)
        ? ''
        : '; the outcome is unknown';
    // Before the StateStoreError pass-through: a shortfall is one, and must not reach callers.
    if (err instanceof DurabilityShortfall) {
      // A read's shortfall: what it found may be a write no replica has (not served).
      const detail =
        op === 'read'
          ? `what Redis holds is not on the replicas yet, so it is not served: ${message}`
          : `${message}${outcome}`;
      return new StateUnavailableError(kind, id, op, detail, { cause: err });
    }
    if (err instanceof StateStoreError) return err;
    const isReply = err instanceof Error && err.name === 'ReplyError';
    const writing = op === 'write' || op === 'clear';
    if (
      isReply &&
      (!TRANSIENT_REPLIES.test(message) || (writing && WRITE_REFUSED_REPLIES.test(message)))
    ) {
      // A refused command did not run (a script's writes are refused before its first one):
      // the writer must learn that nothing was written, not an unknown outcome.
      if (writing) {
        return new StateWriteRefusedError(kind, id, op, message, { cause: err });
      }
      const what = op === 'open' ? 'state store open' : `state ${op} of ${kind}/${id}`;
      return new StateStoreError(`${what}: Redis replied ${message}`, { cause: err });
    }
    // A transient reply (READONLY on a read, LOADING) came at once: no timeout was involved.
    const detail = isReply
      ? `Redis replied ${message} (not now; try again)${outcome}`
      : `Redis unavailable within ${this.commandTimeoutMs} ms (commandTimeoutMs): ${message}${outcome}`;
    return new StateUnavailableError(kind, id, op, detail, { cause: err });
  }
}

import { InvalidOptionError } from '@granary/core';
import { Redis, type Cluster, type RedisOptions } from 'ioredis';
import type { ClusterLogger } from '../../internal/logger';
import { InconsistentStateError, StateStoreError, StateUnavailableError } from '../errors';
import { checkKey, checkWriteArguments } from '../internal/check-arguments';
import type { StateRecord, StateStore, StateWriteOptions } from '../state-store';
import {
  DEFAULT_REDIS_STATE_STORE_OPTIONS,
  reconnectDelayMs,
  type RedisStateStoreOptions,
} from './redis-state-store-options';
import {
  CLEAR_SCRIPT,
  REPLY_EPOCH_CONFLICT,
  REPLY_OK,
  WRITE_MANY_SCRIPT,
  WRITE_SCRIPT,
} from './scripts';
import { WriteBatcher } from './write-batcher';

/**
 * Script command names; versioned so a client shared with a store of another version gets its
 * own (defineCommand of the same name would replace the script under the other store).
 */
const WRITE_COMMAND = 'granaryStateWriteV2';
const WRITE_MANY_COMMAND = 'granaryStateWriteManyV2';
const CLEAR_COMMAND = 'granaryStateClearV2';

/**
 * Server replies that mean "not now" rather than "never": loading, failover, cluster resharding.
 * They map to StateUnavailableError, so callers retry them like a lost connection.
 */
const TRANSIENT_REPLIES = /^(LOADING|BUSY|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|READONLY|NOREPLICAS)/;

type ScriptFn = (...args: (string | number | Uint8Array)[]) => Promise<(number | string)[]>;
type Client = (Redis | Cluster) & Record<string, ScriptFn>;
type Operation = 'read' | 'write' | 'clear';

/**
 * The production {@link StateStore}: one Redis hash per grain; write and clear are each one Lua
 * script (EVALSHA through ioredis `defineCommand`) that checks the expected version and the
 * writer's shard epoch and stores state, version and epoch atomically. Writes of different
 * grains issued in the same event-loop turn travel together in one script call (`writeBatchSize`,
 * see WriteBatcher), each still checked and applied on its own.
 *
 * Fails fast: every call settles within `commandTimeoutMs` (StateUnavailableError when Redis is
 * down or silent); the client keeps reconnecting, so the same store works again once Redis is
 * back.
 *
 * @example
 * const store = new RedisStateStore({ url: 'redis://127.0.0.1:6379', keyPrefix: 'app:state:' });
 * const record = await store.read('counter', 'a');
 * const version = await store.write('counter', 'a', bytes, {
 *   expectedVersion: record?.version ?? null,
 *   epoch: shardEpoch,
 * });
 */
export class RedisStateStore implements StateStore {
  private readonly client: Client;
  private readonly ownsClient: boolean;
  private readonly keyPrefix: string;
  private readonly commandTimeoutMs: number;
  private readonly tombstoneTtlMs: number;
  private readonly kindKeys = new Map<string, string>();
  /** Coalesces concurrent writes (writeBatchSize > 1 and not a Redis Cluster client). */
  private readonly batcher: WriteBatcher | undefined;
  private readyWait: Promise<void> | undefined;
  private closed = false;

  constructor(options: RedisStateStoreOptions = {}) {
    if (options.url !== undefined && options.client !== undefined) {
      throw new InvalidOptionError(
        'client',
        'RedisStateStore takes either url or client, not both',
      );
    }
    const o = { ...DEFAULT_REDIS_STATE_STORE_OPTIONS, ...options };
    if (!Number.isFinite(o.commandTimeoutMs) || o.commandTimeoutMs <= 0) {
      throw new InvalidOptionError(
        'commandTimeoutMs',
        `must be a positive number, got ${o.commandTimeoutMs}`,
      );
    }
    const ttl = o.tombstoneTtlMs;
    if (ttl !== null && !(Number.isSafeInteger(ttl) && ttl > 0)) {
      throw new InvalidOptionError(
        'tombstoneTtlMs',
        `must be null or a positive integer, got ${ttl}`,
      );
    }
    const batch = o.writeBatchSize;
    if (!(Number.isSafeInteger(batch) && batch >= 1)) {
      throw new InvalidOptionError('writeBatchSize', `must be a positive integer, got ${batch}`);
    }
    this.keyPrefix = o.keyPrefix;
    this.commandTimeoutMs = o.commandTimeoutMs;
    this.tombstoneTtlMs = o.tombstoneTtlMs ?? 0;
    this.ownsClient = options.client === undefined;
    const client =
      options.client ??
      new Redis(o.url, {
        retryStrategy: reconnectDelayMs,
        // ioredis types RedisOptions.replyMapping as `X | undefined` but its constructor as
        // `X`, which exactOptionalPropertyTypes tells apart; the value passes through as given.
        ...(o.redisOptions as Omit<RedisOptions, 'replyMapping'>),
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        autoResendUnfulfilledCommands: false,
        commandTimeout: o.commandTimeoutMs,
      });
    this.watchConnection(client, o.logger);
    client.defineCommand(WRITE_COMMAND, { numberOfKeys: 1, lua: WRITE_SCRIPT });
    client.defineCommand(CLEAR_COMMAND, { numberOfKeys: 1, lua: CLEAR_SCRIPT });
    this.client = client as Client;
    const isCluster = (client as { isCluster?: boolean }).isCluster === true;
    if (batch > 1 && !isCluster) {
      // The number of keys varies per call, so it is the script's first argument.
      client.defineCommand(WRITE_MANY_COMMAND, { lua: WRITE_MANY_SCRIPT });
      const sendMany = `${WRITE_MANY_COMMAND}Buffer`; // the packed reply as a Buffer
      this.batcher = new WriteBatcher(
        (key, w) =>
          this.client[WRITE_COMMAND]!(key, expectedArg(w.expected), String(w.epoch), w.bytes),
        (keys, packed) =>
          this.client[sendMany]!(keys.length, ...keys, packed) as unknown as Promise<Buffer>,
        batch,
      );
    }
  }

  /**
   * Logs an outage once when it starts and once when Redis is back. The listener also keeps
   * ioredis from reporting every failed reconnect of the store's own client as unhandled.
   */
  private watchConnection(client: Redis | Cluster, logger: ClusterLogger): void {
    let down = false;
    const lost = (detail: string): void => {
      if (down) return;
      down = true;
      logger.warn(
        { detail, keyPrefix: this.keyPrefix },
        'state store lost Redis; calls fail with StateUnavailableError until it is back',
      );
    };
    // 'reconnecting' follows a closed connection; 'error' also covers a first connect that fails.
    client.on('reconnecting', () => lost('connection closed'));
    client.on('error', (err: Error) => lost(err.message));
    client.on('ready', () => {
      if (!down) return;
      down = false;
      logger.info({ keyPrefix: this.keyPrefix }, 'state store reconnected to Redis');
    });
  }

  /** The Redis key of one grain's state (for operators and tests). */
  keyOf(kind: string, id: string): string {
    let kindKey = this.kindKeys.get(kind);
    if (kindKey === undefined) {
      // Escaping the kind keeps `/` unambiguous: kind 'a/b' + id 'c' differs from 'a' + 'b/c'.
      kindKey = `${this.keyPrefix}{${encodeURIComponent(kind)}/`;
      this.kindKeys.set(kind, kindKey);
    }
    return `${kindKey}${id}}`;
  }

  async read(kind: string, id: string): Promise<StateRecord | null> {
    checkKey(kind, id);
    const [state, version] = await this.run(kind, id, 'read', () =>
      this.client.hmgetBuffer(this.keyOf(kind, id), 's', 'v'),
    );
    if (!state) return null;
    return { state, version: Number(version) };
  }

  async write(
    kind: string,
    id: string,
    state: Uint8Array,
    options: StateWriteOptions,
  ): Promise<number> {
    checkWriteArguments(kind, id, options, state);
    const bytes = Buffer.isBuffer(state)
      ? state
      : Buffer.from(state.buffer, state.byteOffset, state.byteLength);
    const key = this.keyOf(kind, id);
    const expected = options.expectedVersion ?? -1;
    const batcher = this.batcher;
    const reply = await this.run(kind, id, 'write', () =>
      batcher
        ? batcher.write(key, expected, options.epoch, bytes)
        : this.client[WRITE_COMMAND]!(key, expectedArg(expected), String(options.epoch), bytes),
    );
    return this.outcome(kind, id, 'write', options, reply);
  }

  async clear(kind: string, id: string, options: StateWriteOptions): Promise<void> {
    checkWriteArguments(kind, id, options);
    const reply = await this.run(kind, id, 'clear', () =>
      this.client[CLEAR_COMMAND]!(
        this.keyOf(kind, id),
        expectedArg(options.expectedVersion ?? -1),
        String(options.epoch),
        String(this.tombstoneTtlMs),
      ),
    );
    this.outcome(kind, id, 'clear', options, reply);
  }

  /** Closes the client the store created; a client passed in stays open. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsClient) this.client.disconnect();
  }

  private outcome(
    kind: string,
    id: string,
    operation: 'write' | 'clear',
    options: StateWriteOptions,
    reply: (number | string)[],
  ): number {
    const [code, value] = reply;
    if (code === REPLY_OK) return Number(value);
    if (code === REPLY_EPOCH_CONFLICT) {
      throw new InconsistentStateError(kind, id, 'epoch', options.epoch, Number(value), operation);
    }
    const actual = Number(value) < 0 ? null : Number(value);
    throw new InconsistentStateError(
      kind,
      id,
      'version',
      options.expectedVersion,
      actual,
      operation,
    );
  }

  /** Runs one command once the client is ready, bounded by commandTimeoutMs, errors mapped. */
  private async run<T>(
    kind: string,
    id: string,
    op: Operation,
    command: () => Promise<T>,
  ): Promise<T> {
    if (this.closed) {
      throw new StateUnavailableError(kind, id, op, 'the store is closed (close() was called)');
    }
    try {
      if (this.client.status !== 'ready') await this.waitReady();
      return this.ownsClient ? await command() : await this.bounded(command());
    } catch (err) {
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
        reject(new Error(`Redis not connected (status ${this.client.status})`));
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
    if (err instanceof StateStoreError) return err;
    const message = err instanceof Error ? err.message : String(err);
    const isReply = err instanceof Error && err.name === 'ReplyError';
    if (isReply && !TRANSIENT_REPLIES.test(message)) {
      return new StateStoreError(`state ${op} of ${kind}/${id}: Redis replied ${message}`, {
        cause: err,
      });
    }
    const outcome = op === 'read' ? '' : '; the outcome is unknown';
    return new StateUnavailableError(
      kind,
      id,
      op,
      `Redis unavailable within ${this.commandTimeoutMs} ms (commandTimeoutMs): ${message}${outcome}`,
      { cause: err },
    );
  }
}

/** The scripts' expected-version argument: '' for none (-1). */
function expectedArg(expected: number): string {
  return expected < 0 ? '' : String(expected);
}

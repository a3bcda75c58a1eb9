import { LogThrottle } from '@granary/core';
import type { Redis } from 'ioredis';
import { NOOP_LOGGER, lateLogger, type ClusterLogger } from '../../internal/logger';
import { StateDurabilityError, StateUnavailableError } from '../errors';
import { checkKey, checkWriteArguments } from '../internal/check-arguments';
import type { StateRecord, StateStore, StateWriteOptions } from '../state-store';
import { DurableAck } from './durable-ack';
import { DurabilityGate } from './durability-gate';
import {
  ACCEPT_STORE_LOSS_COMMAND,
  IDENTITY_COMMAND,
  LossGuard,
  MARK_LOST_COMMAND,
  RESOLVE_LOST_COMMAND,
} from './loss-guard';
import { LossLedger, type StateLossCounts } from './loss-ledger';
import { RedisCommands, type Operation, type ScriptClient } from './redis-commands';
import type { ReplicaRedial } from './replica-redial';
import { resolveStoreOptions, type RedisStateStoreOptions } from './redis-state-store-options';
import {
  ACCEPT_STORE_LOSS_SCRIPT,
  CLEAR_SCRIPT,
  IDENTITY_SCRIPT,
  MARK_LOST_SCRIPT,
  REPLY_OK,
  RESOLVE_LOST_SCRIPT,
  WRITE_MANY_SCRIPT,
  WRITE_SCRIPT,
} from './scripts';
import {
  acceptStateLoss,
  listStateLoss,
  type StateLossReport,
  type StateLossTarget,
} from './state-loss-admin';
import { StateKeys } from './state-keys';
import { StateSizeCap } from './state-size';
import { storedInteger } from './stored-fields';
import { StoreIdentity } from './store-identity';
import { storeClient } from './store-client';
import { WriteBatcher } from './write-batcher';
import { expectedArg, writeOutcome } from './write-reply';

/**
 * Script command names; versioned so a client shared with a store of another version gets its
 * own (defineCommand of the same name would replace the script under the other store).
 */
const WRITE_COMMAND = 'granaryStateWriteV3';
const WRITE_MANY_COMMAND = 'granaryStateWriteManyV3';
const CLEAR_COMMAND = 'granaryStateClearV3';
/** A failing check after reconnect is logged once per this (ms), then counted. */
const CHECK_LOG_INTERVAL_MS = 10_000;

/**
 * The production {@link StateStore}: one Redis hash per grain; write and clear are each one Lua
 * script (EVALSHA through ioredis `defineCommand`) that checks the expected version and the
 * writer's shard epoch and stores state, version and epoch atomically. Writes of different
 * grains issued in the same event-loop turn travel together in one script call (`writeBatchSize`,
 * see WriteBatcher), each still checked and applied on its own.
 *
 * Durable as declared (`durability`, docs/durability.md): open() checks that the server can give
 * the level and fails with StateDurabilityError if not; `'fsync'` (with WAITAOF) and
 * `'replicated'` await the server once per write batch before any write of it is acknowledged.
 *
 * Lost data is detected, never served: a store identity marker, lost marks on grains and the
 * versions this store saw acknowledged turn a store that went back in time into StateLostError
 * (logged once per grain, counted in `lossCounts`); the kind's `stateLostPolicy` decides whether
 * the grain carries on or waits for an operator (stateLoss(), acceptStateLoss()).
 *
 * Fails fast: every call settles within `commandTimeoutMs` (StateUnavailableError when Redis is
 * down or silent); the client keeps reconnecting, so the same store works again once Redis is
 * back.
 *
 * @example
 * const store = new RedisStateStore({ url: 'redis://127.0.0.1:6379', keyPrefix: 'app:state:' });
 * await store.open(); // or Cluster.start({ stateStores: [store], ... })
 * const record = await store.read('counter', 'a');
 * const version = await store.write('counter', 'a', bytes, {
 *   expectedVersion: record?.version ?? null,
 *   epoch: shardEpoch,
 * });
 */
export class RedisStateStore implements StateStore {
  private readonly commands: RedisCommands;
  private readonly client: ScriptClient;
  private readonly ownsClient: boolean;
  private readonly isCluster: boolean;
  private readonly keys: StateKeys;
  private readonly tombstoneTtlMs: number;
  private readonly logger: ClusterLogger;
  /** Coalesces concurrent writes (writeBatchSize > 1 and not a Redis Cluster client). */
  private readonly batcher: WriteBatcher | undefined;
  private readonly gate: DurabilityGate;
  private readonly ack: DurableAck | undefined;
  private readonly ledger: LossLedger;
  private readonly identity: StoreIdentity;
  private readonly guard: LossGuard;
  private readonly size: StateSizeCap;
  /** Follows a failover (the store's own client only; see storeClient). */
  private readonly redial: ReplicaRedial | undefined;
  /** A check after reconnect that keeps failing (a replica, for one) logs once per 10 s. */
  private readonly checkLog: LogThrottle;
  private opening: Promise<void> | undefined;
  private opened = false;
  private closed = false;
  /** The logger of the first member whose grains used the store (useLogger). */
  private memberLogger: ClusterLogger | undefined = undefined;

  constructor(options: RedisStateStoreOptions = {}) {
    const o = resolveStoreOptions(options);
    this.keys = new StateKeys(o.keyPrefix);
    this.tombstoneTtlMs = o.tombstoneTtlMs ?? 0;
    // Without a logger of its own, the store logs to its first member's (useLogger).
    this.logger = options.logger ?? lateLogger(() => this.memberLogger ?? NOOP_LOGGER);
    this.ownsClient = options.client === undefined;
    this.checkLog = new LogThrottle(this.logger, CHECK_LOG_INTERVAL_MS);
    const own = options.client ? undefined : storeClient(o, this.logger);
    this.redial = own?.redial;
    this.redial?.onPrimaryAgain(this.reconnected);
    const client = (options.client ?? own!.client) as ScriptClient;
    this.client = client;
    this.isCluster = (client as { isCluster?: boolean }).isCluster === true;
    this.commands = new RedisCommands(
      client,
      this.ownsClient,
      o.commandTimeoutMs,
      this.logger,
      o.keyPrefix,
      this.reconnected,
    );
    this.gate = new DurabilityGate(
      client,
      this.isCluster,
      {
        durability: o.durability,
        replicas: o.replicas,
        serverPersistence: o.serverPersistence,
        defaulted: options.durability === undefined,
      },
      (command) => this.commands.run('', '', 'open', command),
      this.logger,
      o.keyPrefix,
    );
    this.size = new StateSizeCap(client, o.maxStateBytes);
    client.defineCommand(WRITE_COMMAND, { numberOfKeys: 1, lua: WRITE_SCRIPT });
    client.defineCommand(CLEAR_COMMAND, { numberOfKeys: 1, lua: CLEAR_SCRIPT });
    client.defineCommand(MARK_LOST_COMMAND, { numberOfKeys: 1, lua: MARK_LOST_SCRIPT });
    client.defineCommand(RESOLVE_LOST_COMMAND, { numberOfKeys: 1, lua: RESOLVE_LOST_SCRIPT });
    client.defineCommand(IDENTITY_COMMAND, { numberOfKeys: 1, lua: IDENTITY_SCRIPT });
    client.defineCommand(ACCEPT_STORE_LOSS_COMMAND, {
      numberOfKeys: 1,
      lua: ACCEPT_STORE_LOSS_SCRIPT,
    });
    if (o.writeBatchSize > 1 && !this.isCluster) {
      // The number of keys varies per call, so it is the script's first argument.
      client.defineCommand(WRITE_MANY_COMMAND, { lua: WRITE_MANY_SCRIPT });
      const sendMany = `${WRITE_MANY_COMMAND}Buffer`; // the packed reply as a Buffer
      this.batcher = new WriteBatcher(
        (key, w) => client[WRITE_COMMAND]!(key, expectedArg(w.expected), String(w.epoch), w.bytes),
        (keys, packed) =>
          client[sendMany]!(keys.length, ...keys, packed) as unknown as Promise<Buffer>,
        o.writeBatchSize,
      );
    }
    if (!this.isCluster) {
      this.ack = new DurableAck(
        client as Redis,
        () => this.gate.plan,
        o.durabilityTimeoutMs,
        () => this.commands.connection,
        this.keys.fence,
      );
    }
    this.ledger = new LossLedger(o.stateLostPolicy, this.logger);
    this.identity = new StoreIdentity(
      (known, fresh, now) => client[IDENTITY_COMMAND]!(this.keys.identity, known, fresh, now),
      (loss, status) => this.ledger.reportStore({ keyPrefix: o.keyPrefix, status, ...loss }),
    );
    this.guard = new LossGuard(
      client,
      (kind, id, command) => this.run(kind, id, 'read', command),
      this.ledger,
      this.identity,
      this.keys,
      this.logger,
    );
  }

  /**
   * Takes the member's logger (Cluster binds it with `{ node, component: 'state' }` when it
   * opens the store or a grain of the member first uses it), unless the store was given its own.
   */
  useLogger(logger: ClusterLogger): void {
    this.memberLogger ??= logger;
  }

  /** The Redis key of one grain's state (for operators and tests). */
  keyOf(kind: string, id: string): string {
    return this.keys.keyOf(kind, id);
  }

  /** What this store counted about lost state (grains, whole-store losses, refused calls). */
  get lossCounts(): Readonly<StateLossCounts> {
    return this.ledger.counts;
  }

  /**
   * Connects, checks that the server can give the declared `durability` (CONFIG GET append*,
   * INFO replication, WAITAOF support) and creates or checks the store's identity marker.
   * Idempotent; every operation awaits it first. Cluster.start awaits it for `stateStores`.
   * @throws StateDurabilityError naming the option and the Redis setting that falls short (the
   *   store then fails every operation with it); StateUnavailableError when Redis cannot be
   *   reached within `commandTimeoutMs` (a later call tries again).
   */
  open(): Promise<void> {
    if (this.opened) return Promise.resolve();
    this.opening ??= this.commands
      .run('', '', 'open', async () => {
        await this.gate.open();
        await this.identity.check();
      })
      .then(
        () => void (this.opened = true),
        (err: unknown) => {
          if (!StateDurabilityError.is(err)) this.opening = undefined;
          throw err;
        },
      );
    return this.opening;
  }

  async read(kind: string, id: string): Promise<StateRecord | null> {
    checkKey(kind, id);
    const key = this.keyOf(kind, id);
    for (let attempt = 0; ; attempt++) {
      const [state, v, l, e] = await this.run(kind, id, 'read', () =>
        this.durableRead(this.size.read(kind, id, key)),
      );
      const version = storedInteger(kind, id, key, 'v', v);
      const lost = storedInteger(kind, id, key, 'l', l);
      storedInteger(kind, id, key, 'e', e); // only checked: the scripts fence on it
      // After the policy accepted a loss (or a write raced a mark) the grain is read again, once.
      const verdict =
        lost === null && version !== null && this.ledger.seen(key) === undefined
          ? 'serve'
          : await this.guard.judgeRead(kind, id, key, version, lost);
      if (verdict === 'read-again') {
        if (attempt === 0) continue;
        throw new StateUnavailableError(
          kind,
          id,
          'read',
          'the grain changed while its lost state was accepted; try again',
        );
      }
      if (version !== null && (state || this.tombstoneTtlMs === 0)) {
        this.ledger.remember(key, version);
      }
      return state && version !== null ? { state, version } : null;
    }
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
    this.size.checkWrite(kind, id, key, bytes);
    const expected = options.expectedVersion ?? -1;
    const batcher = this.batcher;
    const reply = await this.run(kind, id, 'write', () =>
      this.durable(
        batcher
          ? batcher.write(key, expected, options.epoch, bytes)
          : this.client[WRITE_COMMAND]!(key, expectedArg(expected), String(options.epoch), bytes),
      ),
    );
    const version = writeOutcome(this.guard, kind, id, key, 'write', options, reply);
    this.ledger.remember(key, version);
    return version;
  }

  async clear(kind: string, id: string, options: StateWriteOptions): Promise<void> {
    checkWriteArguments(kind, id, options);
    const key = this.keyOf(kind, id);
    const reply = await this.run(kind, id, 'clear', () =>
      this.durable(
        this.client[CLEAR_COMMAND]!(
          key,
          expectedArg(options.expectedVersion ?? -1),
          String(options.epoch),
          String(this.tombstoneTtlMs),
        ),
      ),
    );
    const version = writeOutcome(this.guard, kind, id, key, 'clear', options, reply);
    // A tombstone that expires leaves nothing: its absence later is no loss.
    if (this.tombstoneTtlMs === 0) this.ledger.remember(key, version);
    else this.ledger.forget(key);
  }

  /** The losses not accepted yet: a store-wide one, and every grain marked lost (operators). */
  stateLoss(): Promise<StateLossReport> {
    return listStateLoss(this.guard);
  }

  /**
   * An operator's decision to carry on from what the store holds now: without a target, the
   * store-wide loss and every marked grain; `{ kind }` that kind's; `{ kind, id }` one grain.
   */
  acceptStateLoss(target?: StateLossTarget): Promise<{ store: boolean; grains: number }> {
    return acceptStateLoss(this.guard, target);
  }

  /** Closes the client the store created; a client passed in stays open. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.redial?.close();
    this.checkLog.close();
    this.commands.close();
    if (this.ownsClient) this.client.disconnect();
  }

  /** A write's reply, once the server made it durable as the plan asks (WAIT, WAITAOF). */
  private durable(
    sent: Promise<readonly (number | string | undefined)[]>,
  ): Promise<readonly (number | string | undefined)[]> {
    const ack = this.ack;
    if (ack === undefined || !ack.active) return sent;
    const connection = this.commands.connection;
    return sent.then((reply) =>
      reply[0] === REPLY_OK ? ack.after(connection).then(() => reply) : reply,
    );
  }

  /**
   * A read's reply, once what it found is durable as the plan asks. Without this a read could
   * serve a write whose own WAIT fell short (stored on the primary only, never acknowledged):
   * the grain would answer from it and its version would be taken as acknowledged, so a
   * failover that drops it would be reported as lost state. Finding nothing needs no wait.
   */
  private durableRead(sent: Promise<(Buffer | null)[]>): Promise<(Buffer | null)[]> {
    const ack = this.ack;
    if (ack === undefined || !ack.active) return sent;
    const connection = this.commands.connection;
    return sent.then((reply) =>
      reply.every((field) => field === null)
        ? reply
        : ack.after(connection, true).then(() => reply),
    );
  }

  /** Opens first, refuses writes while the server falls short, then runs the command. */
  private async run<T>(
    kind: string,
    id: string,
    op: Operation,
    command: () => Promise<T>,
  ): Promise<T> {
    if (this.closed) {
      throw new StateUnavailableError(kind, id, op, 'the store is closed (close() was called)');
    }
    if (!this.opened) await this.open();
    if (op !== 'read' && this.gate.faulted) await this.gate.beforeWrite();
    return this.commands.run(kind, id, op, command);
  }

  /**
   * After a reconnection (a restarted Redis, a failover): did the server keep the data (the
   * identity marker) and does it still give the level? Replicas are not required here: right
   * after a failover the new primary has none until they reconnect, and WAIT already refuses
   * writes that no replica acknowledged.
   */
  private readonly reconnected = (): void => {
    if (!this.opened || this.closed) return;
    void this.commands
      .run('', '', 'open', async () => {
        await this.identity.check();
        await this.gate.reconnected();
      })
      .catch((err: unknown) =>
        this.checkLog.log(
          'check',
          'warn',
          { err, identity: this.keys.identity },
          'state store check after reconnect failed',
        ),
      );
  };
}

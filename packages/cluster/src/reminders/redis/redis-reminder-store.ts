import { LogThrottle } from '@granary/core';
import type { Cluster, Redis } from 'ioredis';
import { NOOP_LOGGER, lateLogger, type ClusterLogger } from '../../internal/logger';
import { SilentConnection } from '../../state/redis/silent-connection';
import type { ReplicaRedial } from '../../state/redis/replica-redial';
import { NotConnected } from '../../state/redis/not-connected';
import { sendable } from '../../state/redis/sendable';
import { storeClient } from '../../state/redis/store-client';
import { ReminderCorruptError, ReminderFencedError } from '../errors';
import type { JobOutcome } from '../reminder';
import type {
  ClaimResult,
  ReminderSpec,
  ReminderStore,
  StoredReminder,
  TickClaim,
} from '../reminder-store';
import {
  CLAIM_SCRIPT,
  FINISH_SCRIPT,
  LOAD_MANY_SCRIPT,
  LOAD_SCRIPT,
  PUT_SCRIPT,
  REMOVE_SCRIPT,
} from './reminder-scripts';
import { ReminderDurability } from './reminder-durability';
import { ReminderStoreLoss } from './reminder-store-loss';
import { mappedStoreError } from './reminder-store-errors';
import { fieldOf, globEscape, parseOutcome, parseShard, parseStored } from './reminder-fields';
import {
  resolveReminderStoreOptions,
  type RedisReminderStoreOptions,
} from './redis-reminder-store-options';

export {
  DEFAULT_REDIS_REMINDER_STORE_OPTIONS,
  type RedisReminderStoreOptions,
} from './redis-reminder-store-options';

/** Versioned command names (a shared client may carry another version's scripts). */
const C = {
  load: 'granaryRemLoadV1',
  loadMany: 'granaryRemLoadManyV1',
  put: 'granaryRemPutV4',
  remove: 'granaryRemRemoveV1',
  claim: 'granaryRemClaimV3',
  finish: 'granaryRemFinishV1',
} as const;

type Reply = Array<number | string | Reply>;
type ScriptFn = (...args: (string | number)[]) => Promise<Reply>;
type Client = (Redis | Cluster) & Record<string, ScriptFn>;

const CLAIM_CODES: readonly ClaimResult[] = ['ok', 'taken', 'gone', 'stale'];
/** Corrupt reminders met at load are logged at most once per this (ms), then counted. */
const CORRUPT_LOG_INTERVAL_MS = 10_000;

/**
 * The production {@link ReminderStore}: one Redis hash per (kind, shard), every owner write a Lua
 * script that checks the shard's epoch fence (see reminder-scripts.ts). Claims of one shard
 * travel together: one script call carries every tick of the shard due in the same turn.
 *
 * @example
 * const store = new RedisReminderStore({ url: 'redis://127.0.0.1:6379' });
 * const cluster = await Cluster.start({ ..., reminders: { store } });
 */
export class RedisReminderStore implements ReminderStore {
  private readonly client: Client;
  private readonly ownsClient: boolean;
  private readonly prefix: string;
  private readonly timeoutMs: number;
  /** Dials again when the connection stops answering (only for the store's own client). */
  private readonly silence: SilentConnection | undefined;
  /** Follows a failover (the store's own client only; see storeClient). */
  private readonly redial: ReplicaRedial | undefined;
  private readyWait: Promise<void> | undefined;
  private readonly notConnected: NotConnected;
  private readonly durability: ReminderDurability;
  private memberLogger: ClusterLogger | undefined;
  /**
   * Whether Redis lost this store's data (came back empty): checked at open and after every
   * reconnection, logged at error level once per loss; `current()`, `accept()`, `lostStores`.
   */
  readonly loss: ReminderStoreLoss;
  /** Redis calls made (for the commands-per-fire figure). */
  commands = 0;
  /** Corrupt reminders met by loads and reads (each left unfired; see ReminderCorruptError). */
  corruptReminders = 0;
  private readonly corruptLog: LogThrottle;

  constructor(options: RedisReminderStoreOptions = {}) {
    const o = resolveReminderStoreOptions(options);
    this.prefix = o.keyPrefix;
    this.timeoutMs = o.commandTimeoutMs;
    this.ownsClient = options.client === undefined;
    const logger = options.logger;
    const log = (): ClusterLogger => logger ?? this.memberLogger ?? NOOP_LOGGER;
    // As the state store's: a READONLY reply (a failover demoted the server it is on) dials
    // again, so Sentinel names the new primary. Before, nothing did: writes failed READONLY for
    // as long as that connection lasted.
    const own = options.client ? undefined : storeClient(o, lateLogger(log));
    this.redial = own?.redial;
    const client: Redis | Cluster = options.client ?? own!.client;
    // Outages surface as ReminderStoreUnavailableError on each call (naming the last connection
    // error); the owner retries.
    client.on('error', () => undefined);
    this.notConnected = new NotConnected(client);
    client.defineCommand(C.load, { numberOfKeys: 2, lua: LOAD_SCRIPT });
    // Key count given per call: two keys per shard.
    client.defineCommand(C.loadMany, { lua: LOAD_MANY_SCRIPT });
    client.defineCommand(C.put, { numberOfKeys: 2, lua: PUT_SCRIPT });
    client.defineCommand(C.remove, { numberOfKeys: 2, lua: REMOVE_SCRIPT });
    client.defineCommand(C.claim, { numberOfKeys: 2, lua: CLAIM_SCRIPT });
    client.defineCommand(C.finish, { numberOfKeys: 3, lua: FINISH_SCRIPT });
    this.client = client as Client;
    this.silence = this.ownsClient
      ? new SilentConnection(
          client,
          lateLogger(log),
          { keyPrefix: o.keyPrefix },
          o.commandTimeoutMs,
        )
      : undefined;
    this.corruptLog = new LogThrottle(lateLogger(log), CORRUPT_LOG_INTERVAL_MS);
    this.loss = new ReminderStoreLoss(client, o.keyPrefix, (command) => this.run(command), log);
    this.durability = new ReminderDurability(
      client,
      o,
      options.durability === undefined,
      (command) => this.exec(command),
      log,
      () => this.loss.check(),
    );
    // A server that is the primary again when the redial's pause ends is checked in place: a
    // dial would only drop the commands in flight.
    this.redial?.onPrimaryAgain(this.durability.reconnected);
  }

  /**
   * Connects and checks that the server gives the declared `durability` (CONFIG GET append*,
   * INFO replication, WAITAOF support), as RedisStateStore.open. Idempotent; every operation
   * awaits it first; Cluster.start awaits it for `reminders.store` before the member joins.
   * @throws StateDurabilityError naming the option and the Redis setting that falls short (the
   *   store then fails every operation with it); ReminderStoreUnavailableError when Redis
   *   cannot be reached within `commandTimeoutMs` (a later call tries again).
   */
  open(): Promise<void> {
    return this.durability.open();
  }

  /** Takes the member's logger (Cluster.start), unless the store was given its own. */
  useLogger(logger: ClusterLogger): void {
    this.memberLogger ??= logger;
  }

  /** The key of a shard's hash (its fence and outcomes add `:e` and `:o`). */
  keyOf(kind: string, shard: number): string {
    return `${this.prefix}{${encodeURIComponent(kind)}/${shard}}`;
  }

  async load(kind: string, shard: number, epoch: number): Promise<StoredReminder[]> {
    const key = this.keyOf(kind, shard);
    const reply = await this.write(() => this.client[C.load]!(key, `${key}:e`, String(epoch)));
    this.fenced(reply, kind, shard, epoch);
    return this.parsed(kind, shard, reply[1] as string[]);
  }

  /**
   * One script call for all of `shards` on a plain or Sentinel client. Redis Cluster refuses a
   * script whose keys span slots (each shard has its own hash tag), so there each shard is its
   * own `load`, sent together (ioredis pipelines them on the connections).
   */
  async loadMany(
    kind: string,
    shards: ReadonlyArray<{ shard: number; epoch: number }>,
  ): Promise<Array<StoredReminder[] | ReminderFencedError>> {
    if ((this.client as { isCluster?: boolean }).isCluster === true) {
      return Promise.all(
        shards.map(({ shard, epoch }) =>
          this.load(kind, shard, epoch).catch((err: unknown) => {
            if (err instanceof ReminderFencedError) return err;
            throw err;
          }),
        ),
      );
    }
    const args: Array<string | number> = [shards.length * 2];
    for (const { shard } of shards) {
      const key = this.keyOf(kind, shard);
      args.push(key, `${key}:e`);
    }
    for (const { epoch } of shards) args.push(String(epoch));
    const reply = await this.write(() => this.client[C.loadMany]!(...args));
    return shards.map(({ shard, epoch }, i) => {
      const one = reply[i] as Reply;
      if (Number(one[0]) === -1) {
        return new ReminderFencedError(kind, shard, epoch, Number(one[1]));
      }
      return this.parsed(kind, shard, one[1] as string[]);
    });
  }

  async put(kind: string, shard: number, id: string, name: string, spec: ReminderSpec) {
    const key = this.keyOf(kind, shard);
    const json = JSON.stringify(spec);
    const [gen, t0, last] = await this.write(() =>
      this.client[C.put]!(key, `${key}:o`, fieldOf(id, name), json),
    );
    return { id, name, spec, gen: Number(gen), t0: Number(t0), last: Number(last) };
  }

  async get(kind: string, shard: number, id: string, name: string) {
    const f = fieldOf(id, name);
    const [spec, last] = await this.run(() =>
      this.client.hmget(this.keyOf(kind, shard), `s${f}`, `t${f}`),
    );
    if (!spec) return undefined;
    const r = parseStored(this.at(kind, shard), f, spec, last ?? undefined);
    // Its owner reads it again after each change: a corrupt one is left unfired, as at load.
    if (!(r instanceof ReminderCorruptError)) return r;
    this.corrupt(r);
    return undefined;
  }

  async remove(kind: string, shard: number, id: string, name: string): Promise<boolean> {
    const key = this.keyOf(kind, shard);
    const n = await this.write(() => this.client[C.remove]!(key, `${key}:o`, fieldOf(id, name)));
    return Number(n) > 0;
  }

  async list(kind: string, shard: number, id: string): Promise<StoredReminder[]> {
    const key = this.keyOf(kind, shard);
    const match = `s${globEscape(`${id.length}:${id}`)}*`;
    const specs: Array<[string, string]> = [];
    let cursor = '0';
    do {
      const [next, flat] = await this.run(() =>
        this.client.hscan(key, cursor, 'MATCH', match, 'COUNT', 1000),
      );
      cursor = next;
      for (let i = 0; i < flat.length; i += 2) specs.push([flat[i]!.slice(1), flat[i + 1]!]);
    } while (cursor !== '0');
    if (specs.length === 0) return [];
    const lasts = await this.run(() => this.client.hmget(key, ...specs.map(([f]) => `t${f}`)));
    return specs.map(([f, raw], i) => {
      const r = parseStored(this.at(kind, shard), f, raw, lasts[i] ?? undefined);
      if (r instanceof ReminderCorruptError) throw r;
      return r;
    });
  }

  async claim(kind: string, shard: number, epoch: number, claims: readonly TickClaim[]) {
    const key = this.keyOf(kind, shard);
    const args: Array<string | number> = [key, `${key}:e`, String(epoch)];
    for (const c of claims) args.push(fieldOf(c.id, c.name), c.gen, c.tick);
    const reply = await this.write(() => this.client[C.claim]!(...args));
    this.fenced(reply, kind, shard, epoch);
    return claims.map((_, i) => CLAIM_CODES[Number(reply[i + 1])]!);
  }

  async finish(
    kind: string,
    shard: number,
    epoch: number,
    id: string,
    name: string,
    gen: number,
    outcome: JobOutcome,
  ): Promise<boolean> {
    const key = this.keyOf(kind, shard);
    const reply = await this.write(() =>
      this.client[C.finish]!(
        key,
        `${key}:e`,
        `${key}:o`,
        String(epoch),
        fieldOf(id, name),
        gen,
        JSON.stringify(outcome),
      ),
    );
    this.fenced(reply, kind, shard, epoch);
    return Number(reply[1]) === 1;
  }

  async outcome(kind: string, shard: number, id: string, name: string) {
    const key = this.keyOf(kind, shard);
    const raw = await this.run(() => this.client.hget(`${key}:o`, fieldOf(id, name)));
    if (!raw) return undefined;
    const outcome = parseOutcome(this.at(kind, shard), id, name, raw);
    if (outcome instanceof ReminderCorruptError) throw outcome;
    return outcome;
  }

  async time(): Promise<number> {
    const [seconds, micros] = await this.run(() => this.client.time());
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  async close(): Promise<void> {
    this.corruptLog.close();
    this.redial?.close();
    if (this.ownsClient) this.client.disconnect();
  }

  /** A shard's reminders from its HGETALL; the corrupt ones are logged and left out. */
  private parsed(kind: string, shard: number, flat: string[]): StoredReminder[] {
    return parseShard(this.at(kind, shard), flat, (err) => this.corrupt(err));
  }

  private at(kind: string, shard: number) {
    return { kind, shard, key: this.keyOf(kind, shard) };
  }

  private corrupt(err: ReminderCorruptError): void {
    this.corruptReminders++;
    this.corruptLog.log('corrupt', 'error', { err }, `${err.message}: it is not fired`);
  }

  /** Resolves when the client is (re)connected (one shared wait per outage). */
  private ready(): Promise<void> {
    const client = this.client;
    if (client.status === 'wait') void client.connect().catch(() => undefined);
    return (this.readyWait ??= new Promise<void>((resolve) => {
      client.once('ready', () => {
        this.readyWait = undefined;
        resolve();
      });
    }));
  }

  private fenced(reply: Reply, kind: string, shard: number, epoch: number): void {
    if (Number(reply[0]) === -1) {
      throw new ReminderFencedError(kind, shard, epoch, Number(reply[1]));
    }
  }

  /** A read: once the store is open. */
  private async run<T>(command: () => Promise<T>): Promise<T> {
    await this.durability.before(false);
    return this.exec(command);
  }

  /**
   * A write: refused while the server does not give the level (a check after a reconnection
   * failed), and acknowledged once durable as the level asks (WAIT or WAITAOF on the
   * connection that carried it).
   */
  private async write<T>(command: () => Promise<T>): Promise<T> {
    await this.durability.before(true);
    const reply = await this.exec(command);
    const durable = this.durability.after(this.durability.connection);
    if (durable !== undefined)
      await durable.catch((err: unknown) => Promise.reject(mappedStoreError(err, this.timeoutMs)));
    return reply;
  }

  /** One call, bounded by commandTimeoutMs, errors mapped. */
  private async exec<T>(command: () => Promise<T>): Promise<T> {
    this.commands++;
    let timer: NodeJS.Timeout | undefined;
    // Only a command that had the whole timeout to itself can tell a silent connection.
    const open = sendable(this.client);
    const mark = open && this.silence ? this.silence.mark : -1;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const ready = this.client.status === 'ready';
          reject(new Error(ready ? 'command timed out' : this.notConnected.message()));
        }, this.timeoutMs);
      });
      // A socket our own dial is closing is waited out as a connection not yet made.
      if (!open) await Promise.race([this.ready(), timeout]);
      const result = await Promise.race([command(), timeout]);
      if (mark >= 0) this.silence!.settled(mark);
      return result;
    } catch (err) {
      if (mark >= 0) this.silence!.settled(mark, err);
      throw mappedStoreError(err, this.timeoutMs);
    } finally {
      clearTimeout(timer);
    }
  }
}

import type { Cluster, Redis } from 'ioredis';
import { lateLogger, type ClusterLogger } from '../../internal/logger';
import { StateDurabilityError } from '../../state/errors';
import { DurableAck } from '../../state/redis/durable-ack';
import { DurabilityGate } from '../../state/redis/durability-gate';
import type { ResolvedReminderStoreOptions } from './redis-reminder-store-options';

/**
 * The reminder store's durability level, with the state store's parts (state/redis): the
 * DurabilityGate checks the server when the store opens and after every reconnection, and the
 * DurableAck awaits WAIT or WAITAOF after writes when the level asks for it; with both checks
 * goes the identity marker's (reminder-store-loss.ts). Only the wiring to the reminder store's
 * client is here.
 */
export class ReminderDurability {
  private readonly gate: DurabilityGate;
  private readonly ack: DurableAck | undefined;
  private generation = 0;
  private everReady = false;
  private opened = false;
  private opening: Promise<void> | undefined;

  constructor(
    client: Redis | Cluster,
    o: ResolvedReminderStoreOptions,
    /** The level is the default (errors say so). */
    defaulted: boolean,
    /** Runs a command once the client is ready, bounded and error-mapped. */
    private readonly exec: <T>(command: () => Promise<T>) => Promise<T>,
    private readonly logger: () => ClusterLogger,
    /** Whether the server kept the data (the store's identity marker), at open and reconnect. */
    private readonly checkData: () => Promise<unknown>,
  ) {
    const isCluster = (client as { isCluster?: boolean }).isCluster === true;
    this.gate = new DurabilityGate(
      client,
      isCluster,
      {
        durability: o.durability,
        replicas: o.replicas,
        serverPersistence: o.serverPersistence,
        defaulted,
      },
      exec,
      lateLogger(logger),
      o.keyPrefix,
    );
    if (!isCluster) {
      this.ack = new DurableAck(
        client as Redis,
        () => this.gate.plan,
        o.durabilityTimeoutMs,
        () => this.generation,
      );
    }
    client.on('close', () => void this.generation++);
    client.on('ready', () => {
      // A restarted Redis or a failover may run with other settings: check again.
      if (this.everReady) this.reconnected();
      this.everReady = true;
    });
  }

  /**
   * After a reconnection, or a server that is a primary again on the same connection (a
   * failover back: see ReplicaRedial.onPrimaryAgain): did it keep the data, does it still give
   * the level?
   */
  readonly reconnected = (): void => {
    if (!this.opened) return;
    void this.exec(async () => {
      await this.checkData();
      await this.gate.reconnected();
    }).catch((err: unknown) =>
      this.logger().warn({ err }, 'reminder store durability check after reconnect failed'),
    );
  };

  /**
   * Checks once that the server gives the level. @throws StateDurabilityError (then every
   * operation fails with it), or the store's unavailable error (a later call tries again).
   */
  open(): Promise<void> {
    if (this.opened) return Promise.resolve();
    this.opening ??= this.exec(async () => {
      await this.gate.open();
      await this.checkData();
    }).then(
      () => void (this.opened = true),
      (err: unknown) => {
        if (!StateDurabilityError.is(err)) this.opening = undefined;
        throw err;
      },
    );
    return this.opening;
  }

  /** Before an operation: opened, and writes refused while a durability fault stands. */
  async before(write: boolean): Promise<void> {
    if (!this.opened) await this.open();
    if (write && this.gate.faulted) await this.gate.beforeWrite();
  }

  /** The connection a reply came on (a WAIT must go out on it). */
  get connection(): number {
    return this.generation;
  }

  /** After a write answered on `connection`: durable as the level asks (WAIT, WAITAOF). */
  after(connection: number): Promise<void> | undefined {
    const ack = this.ack;
    return ack !== undefined && ack.active ? ack.after(connection) : undefined;
  }
}

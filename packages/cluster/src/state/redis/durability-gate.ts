import type { Cluster, Redis } from 'ioredis';
import type { ClusterLogger } from '../../internal/logger';
import type { Durability } from '../durability';
import { StateDurabilityError } from '../errors';
import { NO_WAIT, planDurability, type DurabilityPlan } from './durability-plan';
import { readServerFacts, type ServerPersistence } from './server-facts';

/** After a failed check, writes check again at most this often (a fixed setting). */
const RECHECK_MS = 1000;

/** What the gate checks the server against. */
export interface DurabilitySettings {
  durability: Durability;
  replicas: number;
  serverPersistence: ServerPersistence | undefined;
  /** The level is the default (the error says so). */
  defaulted: boolean;
}

/**
 * The store's durability level against the server: checks it when the store opens (throwing
 * StateDurabilityError), again after every reconnection (a failover may land on a server
 * configured differently: writes are then refused until a check passes), and holds the plan
 * (WAIT, WAITAOF) the store follows per write batch.
 */
export class DurabilityGate {
  private current: DurabilityPlan = NO_WAIT;
  private fault: { error: StateDurabilityError; checkedAt: number } | undefined;

  constructor(
    private readonly client: Redis | Cluster,
    private readonly isCluster: boolean,
    private readonly settings: DurabilitySettings,
    /** Runs a command bounded and error-mapped (the store's runner, operation 'open'). */
    private readonly run: <T>(command: () => Promise<T>) => Promise<T>,
    private readonly logger: ClusterLogger,
    private readonly keyPrefix: string,
  ) {}

  /** What the store awaits after each write batch. */
  get plan(): DurabilityPlan {
    return this.current;
  }

  /** At open: plans the level or throws StateDurabilityError. */
  async open(): Promise<void> {
    this.current = await this.check(false);
  }

  /**
   * After a reconnection: only the persistence settings count (a new primary has no replicas
   * until they reconnect, and WAIT refuses writes no replica acknowledged anyway).
   */
  async reconnected(): Promise<void> {
    try {
      this.current = await this.check(true);
      if (this.fault)
        this.logger.info({ keyPrefix: this.keyPrefix }, 'state store durability restored');
      this.fault = undefined;
    } catch (err) {
      if (!StateDurabilityError.is(err)) throw err;
      if (!this.fault) {
        this.logger.error(
          { err, keyPrefix: this.keyPrefix },
          'state store writes refused: the server no longer gives the declared durability',
        );
      }
      this.fault = { error: err, checkedAt: Date.now() };
    }
  }

  /** Before a write: while a fault stands, checks again at most once per RECHECK_MS, then throws it. */
  async beforeWrite(): Promise<void> {
    const fault = this.fault;
    if (fault === undefined) return;
    if (Date.now() - fault.checkedAt >= RECHECK_MS) {
      fault.checkedAt = Date.now();
      await this.run(() => this.reconnected());
    }
    if (this.fault) throw this.fault.error;
  }

  /** True while writes are refused. */
  get faulted(): boolean {
    return this.fault !== undefined;
  }

  /** Reads the server's settings and plans the level; a Redis Cluster client checks every primary. */
  private async check(recheck: boolean): Promise<DurabilityPlan> {
    const nodes = this.isCluster
      ? (this.client as Cluster).nodes('master')
      : [this.client as Redis];
    const { durability, replicas, serverPersistence, defaulted } = this.settings;
    let plan = NO_WAIT;
    for (const node of nodes) {
      const facts = await readServerFacts(node, serverPersistence);
      plan = planDurability(durability, facts, {
        replicas,
        cluster: this.isCluster,
        defaulted,
        recheck,
      });
    }
    return plan;
  }
}

import type { Durability } from '../durability';
import { StateDurabilityError } from '../errors';
import type { ServerFacts, ServerPersistence } from './server-facts';

/** What the store awaits after each write batch to give its durability level. */
export interface DurabilityPlan {
  /** `WAIT <replicas>` after each batch (0: none). */
  replicas: number;
  /** `WAITAOF 1 0` after each batch (the server fsyncs the batch before the store acknowledges). */
  waitAof: boolean;
}

/** The level's needs that vary per store. */
export interface PlanOptions {
  /** Replicas `'replicated'` waits for (option `replicas`). */
  replicas: number;
  /** The client is a Redis Cluster client (no WAIT/WAITAOF after a batch: see planDurability). */
  cluster: boolean;
  /** The level is the default, not set by the user (the message says so). */
  defaulted?: boolean;
  /**
   * A check after a reconnection: only the server's persistence settings count. Mid-failover
   * the client may briefly reach a replica, and a new primary has no replicas until they
   * reconnect; WAIT refuses the writes no replica acknowledged anyway.
   */
  recheck?: boolean;
}

/** Nothing to await: `'none'`, `'restart'`, and `'fsync'` on a server that fsyncs always. */
export const NO_WAIT: DurabilityPlan = { replicas: 0, waitAof: false };

/**
 * Decides how the store gives `level` on the server described by `facts`, or throws
 * StateDurabilityError naming the option and the Redis setting that falls short. The check
 * runs at open() and again on every reconnection (a failover may land on a server configured
 * differently).
 *
 * A Redis Cluster client sends each write alone through ioredis' slot routing, so the store
 * cannot place a WAIT on the connection that carried the write: on a cluster `'fsync'` needs
 * `appendfsync always` and `'replicated'` is refused.
 */
export function planDurability(
  level: Durability,
  facts: ServerFacts,
  options: PlanOptions,
): DurabilityPlan {
  if (level === 'none') return NO_WAIT;
  const p = facts.persistence;
  if (p === undefined) {
    throw fail(
      level,
      options,
      'serverPersistence',
      `cannot be checked: CONFIG GET failed (${facts.configError ?? 'no answer'}); declare how the server persists with the option serverPersistence (e.g. { appendonly: true, appendfsync: 'always' } as your provider documents it), or durability: 'none'`,
    );
  }
  const source = facts.persistenceSource === 'declared' ? ' (declared in serverPersistence)' : '';
  if (!p.appendonly) {
    throw fail(
      level,
      options,
      'appendonly',
      `needs Redis' append-only file, but the server runs with appendonly no${source}: set appendonly yes, or say durability: 'none' to accept losing acknowledged writes when Redis restarts`,
    );
  }
  if (level === 'fsync') {
    if (p.appendfsync === 'always') return NO_WAIT;
    // WAITAOF waits for the fsync that covers the batch, so it also covers everysec's
    // postponed writes (see writesBeforeReply).
    if (facts.waitAof && !options.cluster) return { replicas: 0, waitAof: true };
    const why = options.cluster
      ? 'a Redis Cluster client cannot await WAITAOF per batch'
      : `Redis ${facts.version || '(version unknown)'} has no WAITAOF (7.2 and later)`;
    throw fail(
      level,
      options,
      'appendfsync',
      `needs appendfsync always, or WAITAOF; the server runs with appendfsync ${p.appendfsync ?? '(unknown)'}${source} and ${why}: set appendfsync always, or choose durability 'restart'`,
    );
  }
  if (!writesBeforeReply(p)) {
    const fsync = p.appendfsync ?? '(not declared)';
    throw fail(
      level,
      options,
      'appendfsync',
      `needs Redis to write each command to its append-only file before it replies, but the server runs with appendfsync ${fsync}${source}${fsync === 'everysec' ? EVERYSEC_WHY : ''}: set appendfsync always (also survives a host crash) or appendfsync no (the kernel writes the file to disk later), or say durability: 'none' to accept losing acknowledged writes when Redis is killed`,
    );
  }
  if (level === 'restart') return NO_WAIT;
  if (level === 'replicated' && options.recheck)
    return { replicas: options.replicas, waitAof: false };
  if (options.cluster) {
    throw fail(
      level,
      options,
      'durability',
      `is not available with a Redis Cluster client: WAIT must follow each write on the connection that carried it; use a primary with replicas behind Sentinel, or durability 'restart'/'fsync'`,
    );
  }
  if (facts.role !== 'master') {
    throw fail(
      level,
      options,
      'role',
      `needs the store connected to a primary, but the server's role is ${facts.role || '(INFO failed)'}`,
    );
  }
  if (facts.replicas < options.replicas) {
    throw fail(
      level,
      options,
      'connected_slaves',
      `needs ${options.replicas} replica(s) (option replicas) online at the primary; INFO replication shows ${facts.replicas}: start or reconnect replicas, or lower replicas`,
    );
  }
  return { replicas: options.replicas, waitAof: false };
}

const EVERYSEC_WHY =
  ', where Redis postpones writing the file while its background fsync of the previous second is still running (up to 2 s on a slow disk) and replies meanwhile, so a killed Redis loses those acknowledged writes';

/**
 * True when Redis writes every command to its append-only file (write(2), the kernel's page
 * cache) before it sends the reply, so a killed process loses nothing acknowledged.
 * `appendfsync always` and `no` do; `everysec` does not: while the background fsync it started
 * is still running, Redis keeps new writes in its own memory (up to 2 s) and replies anyway
 * (flushAppendOnlyFile in Redis' aof.c). Measured here: one SIGKILL under disk load lost 32,087
 * acknowledged INCRs with `everysec`, 0 with `no` and `always` (docs/durability.md).
 */
export function writesBeforeReply(p: ServerPersistence): boolean {
  return p.appendonly && (p.appendfsync === 'always' || p.appendfsync === 'no');
}

function fail(
  level: Durability,
  options: PlanOptions,
  setting: string,
  why: string,
): StateDurabilityError {
  const option = options.defaulted ? 'option durability, the default' : 'option durability';
  return new StateDurabilityError(level, setting, `durability '${level}' (${option}) ${why}`);
}

/**
 * Checks a Redis configuration against a level's persistence needs (`appendonly`,
 * `appendfsync`), without a server: the check open() makes, for a config file or a manifest
 * (a deploy test parses the Redis arguments and asks this). The replicas and the role count as
 * given, WAITAOF as absent (both need a running server). Returns the error open() would throw,
 * or undefined when the configuration gives the level.
 */
export function checkServerPersistence(
  level: Durability,
  persistence: ServerPersistence,
): StateDurabilityError | undefined {
  const facts: ServerFacts = {
    persistence,
    persistenceSource: 'config',
    configError: undefined,
    version: '',
    role: 'master',
    replicas: Number.MAX_SAFE_INTEGER,
    waitAof: false,
  };
  try {
    planDurability(level, facts, { replicas: 1, cluster: false });
    return undefined;
  } catch (err) {
    if (StateDurabilityError.is(err)) return err;
    throw err;
  }
}

import { LogThrottle } from '@granary/core';
import type { Cluster, Redis } from 'ioredis';
import { JitteredBackoff } from '../../internal/jittered-backoff';
import type { ClusterLogger } from '../../internal/logger';

/**
 * First pause before dialling again after a READONLY: by the time a demoted primary refuses a
 * write, Sentinel already names the new one, so a failover is followed within ~0.1 s.
 */
const REDIAL_INITIAL_MS = 100;
/** Cap of the pause: a server that stays a replica is dialled at most every 2.5-5 s. */
const REDIAL_MAX_MS = 5000;
/** READONLY replies further apart than this are separate incidents: the back-off starts over. */
const REDIAL_RESET_MS = 30_000;
/** The READONLY warning is logged once per this (ms), then counted in one summary line. */
const REDIAL_LOG_INTERVAL_MS = 10_000;

const READONLY = /^READONLY/;

/**
 * Follows a Sentinel failover for a Redis store's own client: a reply of READONLY means the
 * connection reached a replica (a primary demoted by a failover, an address that now names a
 * replica), so the client dials again, and Sentinel names the current primary.
 *
 * Not at once, as ioredis' `reconnectOnError` does when it returns 1: a server that stays a
 * replica refused the store's identity check after every reconnection, which reconnected again,
 * ~20 times a second for as long as it lasted, with a warning each time. Until the client is on
 * a primary the store is not ready: writes fail with the typed refusal at once. The dials are
 * spaced by a jittered back-off (REDIAL_INITIAL_MS doubling to REDIAL_MAX_MS) and the warning is
 * throttled.
 */
export class ReplicaRedial {
  private client: Redis | Cluster | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastRefusedAt = -Infinity;
  private closed = false;
  private readonly backoff: JitteredBackoff;
  private readonly log: LogThrottle;
  /** Runs instead of a dial when the server is a primary again by then (see onPrimaryAgain). */
  private primaryAgain: (() => void) | undefined;

  constructor(
    logger: ClusterLogger,
    private readonly context: Record<string, unknown>,
    random: () => number = Math.random,
    private readonly now: () => number = Date.now,
  ) {
    this.backoff = new JitteredBackoff(REDIAL_INITIAL_MS, REDIAL_MAX_MS, random);
    this.log = new LogThrottle(logger, REDIAL_LOG_INTERVAL_MS);
  }

  /** The client to dial again (created with `onReplyError` as its `reconnectOnError`). */
  attach(client: Redis | Cluster): void {
    this.client = client;
  }

  /**
   * What to run, instead of dialling again, when the server is a primary again by the time the
   * pause ends (a failover back, an operator's REPLICAOF NO ONE): the checks the store runs after
   * a reconnection. A dial then would only drop the commands in flight: with no offline queue
   * they fail, and a store whose `commandTimeoutMs` is shorter than a reconnection fails them
   * as unavailable (CI: a write ~1 s after a failover back failed "Stream isn't writeable").
   * Without it, the client dials again whatever the server's role.
   */
  onPrimaryAgain(run: () => void): void {
    this.primaryAgain = run;
  }

  /** READONLY replies counted so far. */
  get refusals(): number {
    return this.log.total('readonly');
  }

  /**
   * ioredis' `reconnectOnError`: schedules a dial on READONLY and never asks ioredis to
   * reconnect itself (at once) nor to resend the refused command (the caller learns it was
   * refused).
   */
  readonly onReplyError = (err: Error): false => {
    if (READONLY.test(err.message)) this.refused();
    return false;
  };

  /** Stops the pending dial and flushes the log's summary. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.log.close();
  }

  private refused(): void {
    const now = this.now();
    if (now - this.lastRefusedAt > REDIAL_RESET_MS) this.backoff.reset();
    this.lastRefusedAt = now;
    if (this.timer !== undefined || this.closed) return;
    const delayMs = Math.round(this.backoff.next());
    this.log.log(
      'readonly',
      'warn',
      { ...this.context, delayMs },
      'Redis refused a write as a replica (READONLY): writes are refused until the store is on the primary; dialling again (the pause grows to 5 s while it stays a replica)',
    );
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.dialIfReplica();
    }, delayMs);
    this.timer.unref();
  }

  /** Dials again, unless the server is a primary again and the store checks it in place. */
  private async dialIfReplica(): Promise<void> {
    const client = this.client;
    if (this.closed || client?.status !== 'ready') return;
    if (this.primaryAgain !== undefined && !client.isCluster) {
      // ROLE's first element is 'master' or 'slave'; any error leaves the dial to happen.
      const role = await client.call('ROLE').catch(() => undefined);
      if (this.closed) return;
      if (Array.isArray(role) && role[0] === 'master') {
        this.primaryAgain();
        return;
      }
    }
    if (client.status === 'ready') client.disconnect(true);
  }
}

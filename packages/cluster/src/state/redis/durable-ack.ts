import type { Redis } from 'ioredis';
import { StateStoreError } from '../errors';
import type { DurabilityPlan } from './durability-plan';
import { sendable } from './sendable';

/**
 * A write batch was stored on the primary but not made durable as the level asks within
 * `durabilityTimeoutMs` (too few replicas acknowledged, no fsync), or the connection that
 * carried it changed before the store could ask. The store reports it as StateUnavailableError:
 * the outcome is unknown (the write may survive, or may be lost by the next failover). Internal:
 * it never reaches a caller as itself.
 */
export class DurabilityShortfall extends StateStoreError {
  static override readonly code = 'ERR_STATE_DURABILITY_SHORTFALL';
  override readonly name = 'DurabilityShortfall';
}

interface Waiter {
  /** The connection generation the batch's script was sent and answered on. */
  connection: number;
  /** A read: the WAIT must cover what it saw, whichever connection wrote it (see after()). */
  read: boolean;
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * Awaits `WAIT <replicas>` or `WAITAOF 1 0` after write batches: the cost is paid per batch,
 * not per write, and further coalesced: at most one WAIT is in flight, and it covers every batch
 * whose reply came before it was sent. WAIT blocks the connection it runs on until it returns,
 * so a second one in flight would only queue behind the first.
 *
 * WAIT covers the writes of the connection it is sent on, so it must go out on the connection
 * that carried the batch (ioredis resends a script after NOSCRIPT, so only its reply proves the
 * write went out): a batch whose connection was replaced in between fails instead.
 *
 * Reads too (with a `fenceKey`): what a read found may be a write of another connection whose
 * own WAIT fell short, stored on the primary and on no replica. WAIT waits for the replication
 * offset Redis recorded for the asking connection: after its last command up to Redis 7.0, but
 * from 7.2 (with WAITAOF) only after its last command that propagated a write, so there a read
 * alone is covered by nothing. Before the WAIT of a batch with reads, one INCR of the fence key
 * (the same connection, after the reads) moves that offset past everything the reads saw; the
 * replication stream is in order, so a replica that acknowledged the fence has all of it.
 */
export class DurableAck {
  private waiting: Waiter[] = [];
  private inFlight = false;
  private scheduled = false;

  constructor(
    private readonly client: Redis,
    private readonly plan: () => DurabilityPlan,
    private readonly timeoutMs: number,
    /** The current connection generation (grows on every close). */
    private readonly connection: () => number,
    /** The key a batch with reads INCRs before its WAIT; without one, reads are refused. */
    private readonly fenceKey?: string,
  ) {}

  /** True when batches need a WAIT or WAITAOF after them. */
  get active(): boolean {
    const plan = this.plan();
    return plan.replicas > 0 || plan.waitAof;
  }

  /**
   * Resolves once the writes answered on `connection` are durable per the plan; with `read`,
   * also everything a read answered on it found (the batch's WAIT then follows a fence write).
   */
  after(connection: number, read = false): Promise<void> {
    if (read && this.fenceKey === undefined) {
      return Promise.reject(new Error('DurableAck: reads need a fenceKey'));
    }
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ connection, read, resolve, reject });
      if (!this.inFlight && !this.scheduled) {
        // A batch's replies settle together, each in its own microtask: wait for all of them.
        this.scheduled = true;
        queueMicrotask(this.sendScheduled);
      }
    });
  }

  private readonly sendScheduled = (): void => {
    this.scheduled = false;
    if (!this.inFlight) this.send();
  };

  private send(): void {
    const current = this.connection();
    const batch: Waiter[] = [];
    for (const w of this.waiting) {
      if (w.connection === current) batch.push(w);
      else
        w.reject(new DurabilityShortfall('the connection to Redis was replaced after the write'));
    }
    this.waiting = [];
    if (batch.length === 0) return;
    if (!sendable(this.client)) {
      // A client with an offline queue would send the WAIT on the next connection, where it
      // covers nothing of these batches.
      const status = this.client.status === 'ready' ? 'closing' : this.client.status;
      const err = new DurabilityShortfall(`the connection to Redis is ${status}`);
      for (const w of batch) w.reject(err);
      return;
    }
    this.inFlight = true;
    const { replicas, waitAof } = this.plan();
    // Sent before the WAIT on the same connection, so Redis runs it first (see the class doc).
    const fence = batch.some((w) => w.read)
      ? this.client.incr(this.fenceKey!).then(
          () => undefined,
          (err: unknown) => {
            throw new DurabilityShortfall(
              `could not write the fence that makes WAIT cover a read (${err instanceof Error ? err.message : String(err)})`,
            );
          },
        )
      : undefined;
    const waited = waitAof
      ? this.client.call('WAITAOF', 1, 0, this.timeoutMs).then((reply) => {
          const [local] = reply as number[];
          if (!(local! >= 1)) {
            throw new DurabilityShortfall(
              `not fsynced by Redis within ${this.timeoutMs} ms (WAITAOF, durabilityTimeoutMs)`,
            );
          }
        })
      : this.client.wait(replicas, this.timeoutMs).then((acked) => {
          if (acked < replicas) {
            throw new DurabilityShortfall(
              `stored on the primary but acknowledged by ${acked} of ${replicas} replica(s) within ${this.timeoutMs} ms (WAIT, durabilityTimeoutMs)`,
            );
          }
        });
    // Both settle before the batch does: a fence that failed leaves the WAIT proving nothing.
    const command = fence === undefined ? waited : Promise.all([fence, waited]);
    command
      .then(() => {
        // A client that resends unanswered commands after a reconnect may have run the WAIT on
        // a new connection, where it proves nothing.
        if (this.connection() !== current) {
          throw new DurabilityShortfall('the connection to Redis was replaced during WAIT');
        }
      })
      .then(
        () => {
          for (const w of batch) w.resolve();
        },
        (err: unknown) => {
          const error = err instanceof Error ? err : new Error(String(err));
          for (const w of batch) w.reject(error);
        },
      )
      .finally(() => {
        this.inFlight = false;
        if (this.waiting.length > 0) this.send();
      });
  }
}

import type { Cluster, Redis } from 'ioredis';
import type { ClusterLogger } from '../../internal/logger';

/** ioredis' `commandTimeout` error, and the stores' own bound around a command. */
const TIMED_OUT = /^command timed out$/i;

/**
 * Drops a connection to Redis that has gone silent, so the client dials again.
 *
 * A peer that vanished without a reset (a crashed host, a dropped NAT entry, a partition) leaves
 * the TCP connection open for many minutes while the kernel retransmits. ioredis' commandTimeout
 * fails each command but keeps that connection, so every later command times out as well, and a
 * Sentinel failover behind it is never followed. A command that times out with no reply on the
 * connection since it was sent means the connection is silent, not merely slow: a busy Redis
 * still answers the commands ahead of it. Then the client disconnects and reconnects (once per
 * silent stretch); the store's reconnect check runs as after any reconnection.
 *
 * Only for clients the store created: a client passed in is its owner's to manage.
 */
export class SilentConnection {
  /** Commands settled other than by a timeout: a reply (or a failure that is not silence). */
  private answered = 0;

  constructor(
    private readonly client: Redis | Cluster,
    private readonly logger: ClusterLogger,
    private readonly context: Record<string, unknown>,
    private readonly commandTimeoutMs: number,
  ) {}

  /** Taken just before a command is sent; handed back to `settled`. */
  get mark(): number {
    return this.answered;
  }

  /** After the command sent at `mark`: `err` if it failed. */
  settled(mark: number, err?: unknown): void {
    if (err === undefined || !(err instanceof Error) || !TIMED_OUT.test(err.message)) {
      this.answered++;
      return;
    }
    if (this.answered !== mark || this.client.status !== 'ready') return;
    this.answered++; // the commands still timing out on this connection do not dial again
    this.logger.warn(
      { ...this.context, commandTimeoutMs: this.commandTimeoutMs },
      'no reply from Redis on this connection within commandTimeoutMs: reconnecting',
    );
    this.client.disconnect(true);
  }
}

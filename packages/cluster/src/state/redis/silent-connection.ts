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
 * Sentinel failover behind it is never followed.
 *
 * A command that timed out with no reply on the connection since it was sent is a suspicion, not
 * proof: a busy Redis still answers the commands ahead of it, but an event loop held by a long
 * turn or a GC pause fires the timers before it reads the replies already waiting. So a PING
 * goes out on the connection; only if it too times out with nothing answered meanwhile does the
 * client disconnect and reconnect (the store's reconnect check then runs as after any
 * reconnection). One probe at a time.
 *
 * Only for clients the store created: a client passed in is its owner's to manage.
 */
export class SilentConnection {
  /** Commands settled other than by a timeout: a reply (or a failure that is not silence). */
  private answered = 0;
  private probing = false;

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
    if (err === undefined || !timedOut(err)) {
      this.answered++;
      return;
    }
    if (this.answered !== mark || this.probing || this.client.status !== 'ready') return;
    this.probing = true;
    const before = this.answered;
    // The client's commandTimeout bounds the PING too.
    this.client.ping().then(
      () => {
        this.probing = false;
        this.answered++;
      },
      (failure: unknown) => {
        this.probing = false;
        if (!timedOut(failure) || this.answered !== before || this.client.status !== 'ready') {
          return;
        }
        this.logger.warn(
          { ...this.context, commandTimeoutMs: this.commandTimeoutMs },
          'no reply from Redis on this connection within commandTimeoutMs, PING included: reconnecting',
        );
        this.client.disconnect(true);
      },
    );
  }
}

function timedOut(err: unknown): boolean {
  return err instanceof Error && TIMED_OUT.test(err.message);
}

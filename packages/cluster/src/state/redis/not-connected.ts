import type { Cluster, Redis } from 'ioredis';

/**
 * What a call that could not be sent because the client is not connected says: the client's
 * status and the last error it reported since it was last ready. Without the error, a Redis that
 * refuses the store (NOAUTH after a password was set, WRONGPASS, a TLS mismatch) read as a plain
 * outage ("status reconnecting") on every call, and the cause was never logged.
 */
export class NotConnected {
  private last: string | undefined;

  constructor(private readonly client: Redis | Cluster) {
    client.on('error', (err: Error) => {
      if (client.status !== 'ready') this.last = err.message;
    });
    client.on('ready', () => {
      this.last = undefined;
    });
  }

  /** The last connection error since the client was last ready, if any. */
  get lastError(): string | undefined {
    return this.last;
  }

  /** `Redis not connected (status reconnecting; last error: NOAUTH ...)`. */
  message(): string {
    const why = this.last === undefined ? '' : `; last error: ${this.last}`;
    return `Redis not connected (status ${this.client.status}${why})`;
  }
}

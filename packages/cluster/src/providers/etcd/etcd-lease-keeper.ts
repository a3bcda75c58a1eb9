import { performance } from 'node:perf_hooks';
import type { Etcd3 } from 'etcd3';
import type { ClusterLogger } from '../../internal/logger';
import type { ResolvedEtcdProviderOptions } from './etcd-provider-options';

/**
 * How often the keeper checks, with no traffic, whether the lease can still be proven alive: on
 * wake-up from a blocked loop this timer is overdue and fires in the first timers phase.
 */
const VALIDITY_CHECK_MS = 100;

/**
 * Keeps one etcd lease alive and knows, cheaply and synchronously, whether it can still prove it
 * is: the lease is trusted until `send time of the last successful keep-alive + TTL - margin`
 * (etcd refreshes the TTL when it receives the keep-alive, which is after we sent it). When that
 * moment passes, or etcd says the lease is gone, `onLost` runs once.
 */
export class EtcdLeaseKeeper {
  private validUntil = 0;
  private keepAliveTimer: NodeJS.Timeout | undefined;
  private checkTimer: NodeJS.Timeout | undefined;
  private lost = false;

  private constructor(
    private readonly client: Etcd3,
    /** The lease id (int64 as a decimal string). */
    readonly id: string,
    private readonly options: ResolvedEtcdProviderOptions,
    private readonly logger: ClusterLogger,
    private readonly onLost: (cause: string) => void,
  ) {}

  /** Grants a lease of `ttlSeconds` and starts keeping it alive. */
  static async grant(
    client: Etcd3,
    options: ResolvedEtcdProviderOptions,
    logger: ClusterLogger,
    onLost: (cause: string) => void,
  ): Promise<EtcdLeaseKeeper> {
    const sentAt = performance.now();
    const res = await client.leaseClient.leaseGrant(
      { TTL: options.ttlSeconds },
      { deadline: Date.now() + options.requestTimeoutMs },
    );
    if (Number(res.TTL) !== options.ttlSeconds) {
      logger.warn(
        { requested: options.ttlSeconds, granted: Number(res.TTL) },
        'etcd granted a different lease TTL than ttlSeconds; fencing still uses ttlSeconds',
      );
    }
    const keeper = new EtcdLeaseKeeper(client, String(res.ID), options, logger, onLost);
    keeper.validUntil = sentAt + keeper.trustMs();
    return keeper;
  }

  /** Starts the keep-alive and validity timers. */
  start(): void {
    this.keepAliveTimer = setInterval(
      () => void this.keepAlive(),
      this.options.keepAliveIntervalMs,
    );
    this.checkTimer = setInterval(() => this.valid(), VALIDITY_CHECK_MS);
  }

  /** O(1): true while the lease is provably alive; the first false triggers onLost. */
  valid(): boolean {
    if (this.lost) return false;
    if (performance.now() < this.validUntil) return true;
    this.fail('no successful keep-alive within ttlSeconds - safetyMarginMs');
    return false;
  }

  /** Stops the timers (the lease itself is left to the caller: revoke or let it expire). */
  stop(): void {
    clearInterval(this.keepAliveTimer);
    clearInterval(this.checkTimer);
    this.keepAliveTimer = undefined;
    this.checkTimer = undefined;
  }

  /** Revokes the lease (deleting every key on it); throws if etcd does not answer. */
  async revoke(): Promise<void> {
    this.stop();
    this.lost = true;
    await revokeLease(this.client, this.id, this.options.requestTimeoutMs);
  }

  private async keepAlive(): Promise<void> {
    if (this.lost) return;
    const sentAt = performance.now();
    try {
      const stream = await this.client.leaseClient.leaseKeepAlive({
        deadline: Date.now() + this.options.requestTimeoutMs,
      });
      const res = await new Promise<{ TTL: string }>((resolve, reject) => {
        stream.on('data', resolve);
        stream.on('error', reject);
        stream.on('end', () => reject(new Error('keep-alive stream ended without a reply')));
        stream.write({ ID: this.id });
      });
      stream.end();
      if (Number(res.TTL) <= 0) {
        this.fail('etcd reports the lease expired');
        return;
      }
      this.validUntil = Math.max(this.validUntil, sentAt + this.trustMs());
    } catch (err) {
      // Not fatal by itself: the lease may still be alive; valid() decides when it cannot be.
      this.logger.debug({ err, lease: this.id }, 'etcd keep-alive failed');
    }
  }

  private trustMs(): number {
    return this.options.ttlSeconds * 1000 - this.options.safetyMarginMs;
  }

  private fail(cause: string): void {
    if (this.lost) return;
    this.lost = true;
    this.stop();
    this.onLost(cause);
  }
}

/** Revokes a lease by id; an already expired lease counts as revoked. */
export async function revokeLease(client: Etcd3, id: string, timeoutMs: number): Promise<void> {
  try {
    await client.leaseClient.leaseRevoke({ ID: id }, { deadline: Date.now() + timeoutMs });
  } catch (err) {
    if ((err as Error).name === 'EtcdLeaseInvalidError' || /lease not found/.test(String(err)))
      return;
    throw err;
  }
}

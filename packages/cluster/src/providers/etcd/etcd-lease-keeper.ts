import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Etcd3, IOptions } from 'etcd3';
import type { ClusterLogger } from '../../internal/logger';
import type { LeaseCredentials } from './lease/lease-protocol';
import { LeaseThread } from './lease/lease-thread';
import type { ResolvedEtcdProviderOptions } from './etcd-provider-options';

/**
 * How often the keeper checks, with no traffic, whether the lease can still be proven alive: on
 * wake-up from a blocked loop this timer is overdue and fires in the first timers phase.
 */
const VALIDITY_CHECK_MS = 100;

/**
 * One lease to grant, across retries: its id (random, 63 bits: chosen by the member so that a
 * retry can tell its own earlier grant from none) and when the first try was sent.
 */
export interface GrantAttempt {
  readonly id: string;
  firstSentAt?: number;
}

/** A new grant attempt with a random positive int64 id. */
export function newGrantAttempt(): GrantAttempt {
  const id = randomBytes(8).readBigUInt64BE() & 0x7fff_ffff_ffff_ffffn;
  return { id: (id === 0n ? 1n : id).toString() };
}

/**
 * What the keeper tells its owner. `lost` says whether the lease may still come back: a trust
 * window that ran out while etcd was merely slow to answer is `recoverable` (the lease thread goes
 * on sending keep-alives; `restored` runs if one is answered while etcd still holds the lease);
 * a lease etcd reports gone, revoked after a loop stall, or not restored within the recovery
 * window is not.
 */
export interface LeaseKeeperEvents {
  lost(cause: string, recoverable: boolean): void;
  restored(): void;
}

/**
 * One etcd lease: granted here on the main thread, kept alive by the process's lease thread
 * (LeaseThread, off the main event loop), and known cheaply and synchronously to be alive or
 * not. The lease is trusted until `send time of the last answered keep-alive + TTL - margin`
 * (etcd restarts the TTL when it receives the keep-alive, which is later), a time the lease
 * thread writes to shared memory; `valid()` compares it with the clock.
 *
 * When that time passes the lease is suspended (`lost`, recoverable): not trusted, but still
 * kept. etcd never renews an expired lease (a keep-alive of one answers TTL 0), so a keep-alive
 * answered with a positive TTL proves the lease lived without a gap since it was granted, and
 * with it every key on it: nobody else can have claimed what it holds. Such an answer makes the
 * lease trusted again by the same rule as always (its send time + TTL - margin), and `restored`
 * runs. When etcd says the lease is gone, when the thread stops keeping it because the main loop
 * stalled longer than `maxLoopStallMs` (it revokes it), or when no answer restores it within
 * `recoverWithinMs`, `lost` runs (not recoverable) and the keeper stops.
 */
export class EtcdLeaseKeeper {
  private checkTimer: NodeJS.Timeout | undefined;
  private lost = false;
  private released = false;
  private kept = false;
  /** performance.now() when the trust window ran out (recovering until recoverWithinMs after). */
  private suspendedAt: number | undefined;
  private readonly thread = LeaseThread.get();
  private readonly slot: number;

  private constructor(
    /** The lease id (int64 as a decimal string). */
    readonly id: string,
    trustedUntil: number,
    private readonly options: ResolvedEtcdProviderOptions,
    private readonly logger: ClusterLogger,
    private readonly events: LeaseKeeperEvents,
  ) {
    this.slot = this.thread.allocate(
      {
        lease: id,
        lost: (cause) => this.fail(cause),
        log: (level, msg, fields) => this.logger[level](fields, msg),
      },
      trustedUntil,
    );
  }

  /**
   * Grants a lease of `ttlSeconds` under the id of `attempt` (chosen here, not by etcd); `keep()`
   * hands it to the lease thread. A grant whose answer was lost (a deadline: etcd may have
   * granted it) is retried with the same attempt: etcd then answers that the lease exists, and
   * it is this member's, trusted from the first attempt's send time (no later than etcd's grant).
   * So a slow etcd never leaves granted leases nobody keeps. `timeoutMs`: this attempt's deadline.
   */
  static async grant(
    client: Etcd3,
    options: ResolvedEtcdProviderOptions,
    logger: ClusterLogger,
    events: LeaseKeeperEvents,
    attempt: GrantAttempt,
    timeoutMs = options.requestTimeoutMs,
  ): Promise<EtcdLeaseKeeper> {
    const sentAt = performance.now();
    attempt.firstSentAt ??= sentAt;
    // Granted now: etcd created it on receiving this request. Already there: an earlier try of
    // this attempt created it, no earlier than the first try was sent.
    let from = sentAt;
    try {
      const res = await client.leaseClient.leaseGrant(
        { TTL: options.ttlSeconds, ID: attempt.id },
        { deadline: Date.now() + timeoutMs },
      );
      if (Number(res.TTL) !== options.ttlSeconds) {
        logger.warn(
          { requested: options.ttlSeconds, granted: Number(res.TTL) },
          'etcd granted a different lease TTL than ttlSeconds; fencing still uses ttlSeconds',
        );
      }
    } catch (err) {
      if (!/lease already exists/.test(String(err))) throw err;
      from = attempt.firstSentAt;
    }
    return new EtcdLeaseKeeper(attempt.id, from + trustMs(options), options, logger, events);
  }

  /**
   * Hands the lease to the lease thread (keep-alives start) without trusting it to anyone yet:
   * called right after the grant, so the lease is renewed while the member key is written (a
   * registration can take seconds on a starved etcd, longer than etcd waits for a keep-alive).
   */
  keep(): void {
    if (this.lost || this.released || this.kept) return;
    this.kept = true;
    const etcd: Omit<IOptions, 'hosts'> | undefined = this.options.etcd;
    this.thread.keep({
      slot: this.slot,
      lease: this.id,
      endpoints: this.options.endpoints,
      credentials: etcd?.credentials as LeaseCredentials | undefined,
      auth: etcd?.auth ? { username: etcd.auth.username, password: etcd.auth.password } : undefined,
      grpcOptions: cloneable(etcd?.grpcOptions),
      trustMs: trustMs(this.options),
      intervalMs: this.options.keepAliveIntervalMs,
      attemptTimeoutMs: this.options.requestTimeoutMs,
      maxLoopStallMs: this.options.maxLoopStallMs,
    });
  }

  /** Keeps the lease (if keep() has not) and starts the validity timer: the lease is in use. */
  start(): void {
    if (this.lost || this.released) return;
    this.keep();
    this.checkTimer = setInterval(() => this.check(), VALIDITY_CHECK_MS);
  }

  /**
   * O(1): true while the lease is provably alive. The first false suspends it (`lost`,
   * recoverable); it stays false while suspended, whatever the clock says, until the check timer
   * has seen the lease trusted again and `restored` ran.
   */
  valid(): boolean {
    if (this.lost || this.released || this.suspendedAt !== undefined) return false;
    if (performance.now() < this.thread.trustedUntil(this.slot)) return true;
    this.suspendedAt = performance.now();
    this.events.lost('no keep-alive answered within ttlSeconds - safetyMarginMs', true);
    return false;
  }

  /** True once the lease is lost for good or stopped (it can never be valid again). */
  get gone(): boolean {
    return this.lost || this.released;
  }

  /** True while suspended: not trusted, still kept alive in the hope etcd still holds it. */
  get recovering(): boolean {
    return this.suspendedAt !== undefined && !this.lost && !this.released;
  }

  /** The validity timer: notices a lapse with no traffic, a restored lease, a recovery too late. */
  private check(): void {
    if (this.suspendedAt === undefined) {
      this.valid();
      return;
    }
    const now = performance.now();
    if (now < this.thread.trustedUntil(this.slot)) {
      this.suspendedAt = undefined;
      this.events.restored();
    } else if (now - this.suspendedAt > recoverWithinMs(this.options)) {
      this.fail(
        `no keep-alive answered within ${recoverWithinMs(this.options)} ms of the fence (2 x ttlSeconds)`,
      );
    }
  }

  /** Stops keeping the lease (the lease itself is left to the caller: revoke or let it expire). */
  stop(): void {
    clearInterval(this.checkTimer);
    this.checkTimer = undefined;
    if (this.released) return;
    this.released = true;
    this.thread.release(this.slot);
  }

  private fail(cause: string): void {
    if (this.lost || this.released) return;
    this.lost = true;
    this.stop();
    this.events.lost(cause, false);
  }
}

/**
 * How long a suspended lease is kept in the hope that etcd still holds it: two TTLs. Past that,
 * re-registering is no slower than waiting (etcd, if it answers at all, has had a whole TTL to
 * expire the lease), and a member whose keep-alive stream is wedged gets a fresh start.
 */
function recoverWithinMs(options: ResolvedEtcdProviderOptions): number {
  return 2 * options.ttlSeconds * 1000;
}

/** How long after sending an answered keep-alive the lease is trusted. */
function trustMs(options: ResolvedEtcdProviderOptions): number {
  return options.ttlSeconds * 1000 - options.safetyMarginMs;
}

/** grpc-js channel options are plain values; anything else cannot cross to the thread. */
function cloneable(options: object | undefined): Record<string, unknown> | undefined {
  if (!options) return undefined;
  return Object.fromEntries(
    Object.entries(options).filter(([, v]) => ['string', 'number', 'boolean'].includes(typeof v)),
  );
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

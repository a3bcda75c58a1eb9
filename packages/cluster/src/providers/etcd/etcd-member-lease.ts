import type { Etcd3 } from 'etcd3';
import { JoinRefusedError, JoinTimeoutError, NotJoinedError } from '../../errors';
import { JitteredBackoff } from '../../internal/jittered-backoff';
import { Listeners } from '../../internal/listeners';
import type { ClusterLogger } from '../../internal/logger';
import type { JoinRequest, LeaseHealth } from '../cluster-provider';
import type { EtcdKeys } from './etcd-keys';
import { JOIN_BACKOFF_INITIAL_MS, JOIN_BACKOFF_MAX_MS, type JoinBudget } from './etcd-join-retry';
import {
  EtcdLeaseKeeper,
  newGrantAttempt,
  revokeLease,
  type GrantAttempt,
} from './etcd-lease-keeper';
import type { ResolvedEtcdProviderOptions } from './etcd-provider-options';
import {
  MemberKeyHeldError,
  RegistrationConflictError,
  credentialsRefusal,
  registerMember,
} from './etcd-registration';

/**
 * First delay of re-registration after a fence (jittered: [125, 250] ms). Not zero: when one CPU
 * burst fences many members at once, their re-registrations (each a membership change that every
 * member reacts to) spread out instead of landing together on a saturated cluster.
 */
const REREGISTER_BACKOFF_INITIAL_MS = 250;
/** Cap of the re-registration backoff. */
const REREGISTER_BACKOFF_MAX_MS = 10_000;
/**
 * A fence within this long of the last registration continues a streak: each fence of a streak
 * starts the backoff one doubling higher, so a member that keeps fencing (a starved host) backs
 * off to seconds instead of churning the membership.
 */
const FENCE_STREAK_WINDOW_MS = 30_000;

/** What the member's lease needs from the provider around it. */
export interface MemberLeaseHost {
  readonly options: ResolvedEtcdProviderOptions;
  logger(): ClusterLogger;
  client(operation: string): Etcd3;
  keys(operation: string): EtcdKeys;
  self(operation: string): JoinRequest;
  /** The member key's value now (its status may have changed since the registration). */
  memberValue(): Buffer;
  /** True once markLeaving ran (the member key's status is no longer `up`). */
  leaving(): boolean;
  stopped(): boolean;
}

/**
 * The member's registration in etcd: its lease (EtcdLeaseKeeper) and its member key on it, from
 * join to leave, through fences.
 *
 * A fence (the lease no longer provably alive) makes `valid()` false at once and emits
 * `lease-lost`. What follows depends on why. If etcd was only slow to answer keep-alives, the
 * lease is kept and keep-alives go on: one answered with a positive TTL proves etcd held the
 * lease throughout (it never renews an expired one), so the member key and every claim on the
 * lease are still this member's, untouched; the member comes back on the same lease and
 * incarnation (`lease-restored`) and the cluster sees no membership change. If etcd says the
 * lease is gone, or it was revoked after a loop stall, or no keep-alive is answered within two
 * TTLs, the old lease is revoked and the member registers again under a new lease (a new
 * incarnation) with jittered exponential backoff, starting higher for each fence in a streak.
 */
export class EtcdMemberLease {
  readonly healthListeners = new Listeners<LeaseHealth>();
  /** The member key's create revision: the member's incarnation. */
  incarnation = 0;
  private lease: EtcdLeaseKeeper | undefined;
  /** A fenced lease kept in the hope etcd still holds it (not trusted meanwhile). */
  private recovering: EtcdLeaseKeeper | undefined;
  /** Leases of earlier registrations that still need revoking (their claims go with them). */
  private readonly staleLeases = new Set<string>();
  /** When the last registration succeeded (Date.now()), and fences in a row since. */
  private registeredAt = 0;
  private fenceStreak = 0;
  /** A grant whose outcome is unknown: the next grant retries it under the same id. */
  private grantAttempt: GrantAttempt | undefined;

  constructor(private readonly host: MemberLeaseHost) {}

  /** The lease id while the lease is provably alive, else undefined. */
  currentId(): string | undefined {
    return this.lease?.valid() ? this.lease.id : undefined;
  }

  /** The lease, or undefined while fenced (callers check `valid()` at their own moment). */
  current(): EtcdLeaseKeeper | undefined {
    return this.lease;
  }

  /** O(1): the lease is provably alive right now. */
  valid(): boolean {
    return this.lease !== undefined && this.lease.valid();
  }

  /**
   * Registers, retrying with jittered backoff within the join's `budget` (renewed when the lease
   * is granted and when the member key is written), or forever without one (re-registration,
   * which also waits `firstDelayMs` before its first attempt). One lease serves every attempt
   * while it lives (kept alive meanwhile): in a join storm a registration can fail several times
   * (a deadline, a race on a kind spec), and a grant per attempt would be a lease per attempt.
   * Each failed attempt gives the next request a longer deadline (JoinBudget.attemptTimeoutMs).
   */
  async register(
    budget?: JoinBudget,
    backoff = new JitteredBackoff(JOIN_BACKOFF_INITIAL_MS, JOIN_BACKOFF_MAX_MS),
    firstDelayMs = 0,
  ): Promise<void> {
    if (firstDelayMs > 0) await new Promise((r) => setTimeout(r, firstDelayMs));
    const { options } = this.host;
    const client = this.host.client('join');
    let lease: EtcdLeaseKeeper | undefined;
    let waitSaid = false;
    try {
      for (let attempt = 1; ; attempt++) {
        if (this.host.stopped()) throw new NotJoinedError('register');
        try {
          if (lease?.gone) lease = undefined;
          const timeoutMs = budget?.attemptTimeoutMs(attempt) ?? options.requestTimeoutMs;
          if (!lease) {
            lease = await this.grant(timeoutMs);
            budget?.progress();
          }
          if (await this.registerOn(lease, timeoutMs)) {
            lease = undefined; // in use
            this.registeredAt = Date.now();
            budget?.progress();
          }
          return; // registered, or stopped meanwhile (the lease is given up below)
        } catch (err) {
          if (this.host.stopped()) throw err;
          // A join that conflicts with the cluster's configuration fails at once; a
          // re-registration keeps trying (the conflicting member may leave), saying why.
          if (err instanceof JoinRefusedError && budget) throw err;
          const endpoints = options.endpoints.join(', ');
          const refused = budget && credentialsRefusal(err, endpoints);
          if (refused) throw refused;
          const delay = backoff.next();
          if (budget && Date.now() + delay >= budget.deadline) {
            throw new JoinTimeoutError(
              `could not join cluster '${this.host.self('join').cluster}' through etcd at ${endpoints} within ` +
                `${options.joinTimeoutMs} ms (joinTimeoutMs) after ${attempt} attempts: ${(err as Error).message}`,
              { cause: err },
            );
          }
          if (expectedWait(err)) {
            // etcd answered: a race with another member's registration, or the previous
            // process with this id (restarted within its lease's TTL). Said once, not as a failure.
            if (!waitSaid) {
              waitSaid = true;
              this.host.logger().info({ attempt }, `registration waits: ${(err as Error).message}`);
            }
          } else {
            this.host
              .logger()
              .warn(
                { err, endpoints: options.endpoints, attempt, retryInMs: Math.round(delay) },
                `cannot register with etcd at ${endpoints}; retrying in ${Math.round(delay)} ms`,
              );
          }
          await new Promise((r) => setTimeout(r, delay));
        }
      }
    } finally {
      // Not registered on it: stop keeping it and revoke it (its keys, if any, go with it).
      if (lease) {
        lease.stop();
        await revokeLease(client, lease.id, options.requestTimeoutMs).catch(() => undefined);
      }
    }
  }

  /**
   * etcd refused a request on the lease (lease not found): it is gone for good, whether trusted
   * or still recovering.
   */
  gone(lease: EtcdLeaseKeeper, cause: string): void {
    this.lost(lease, cause, false);
  }

  /** Stops keeping the lease (recovering or not) and revokes it with every stale one. */
  async revoke(client: Etcd3): Promise<void> {
    for (const lease of [this.lease, this.recovering]) {
      if (!lease) continue;
      lease.stop();
      this.staleLeases.add(lease.id);
    }
    this.lease = undefined;
    this.recovering = undefined;
    await this.revokeStale(client);
  }

  /**
   * Revokes stale leases, then grants a lease and starts keeping it alive (not trusted yet). A
   * grant that failed is retried under the same attempt (the same lease id).
   */
  private async grant(timeoutMs: number): Promise<EtcdLeaseKeeper> {
    const client = this.host.client('join');
    await this.revokeStale(client);
    this.grantAttempt ??= newGrantAttempt();
    const lease: EtcdLeaseKeeper = await EtcdLeaseKeeper.grant(
      client,
      this.host.options,
      this.host.logger(),
      {
        lost: (cause, recoverable) => this.lost(lease, cause, recoverable),
        restored: () => this.restored(lease),
      },
      this.grantAttempt,
      timeoutMs,
    );
    this.grantAttempt = undefined;
    lease.keep();
    return lease;
  }

  /**
   * Creates the member key on `lease` only if absent (a key held by another lease, a previous
   * process with this id, is waited out) and puts the lease in use. False if the provider
   * stopped meanwhile (the caller gives the lease up).
   */
  private async registerOn(lease: EtcdLeaseKeeper, timeoutMs: number): Promise<boolean> {
    const client = this.host.client('join');
    const self = this.host.self('join');
    const keys = this.host.keys('join');
    const value = this.host.memberValue();
    const incarnation = await registerMember(client, keys, self, value, lease.id, timeoutMs);
    if (this.host.stopped()) return false;
    // etcd expired it while the member key was written (its loss was reported to nobody).
    if (lease.gone) throw new Error('the lease expired during registration');
    this.incarnation = incarnation;
    this.lease = lease;
    lease.start();
    return true;
  }

  /** Fence now; then wait for the lease to come back (recoverable) or register again. */
  private lost(lease: EtcdLeaseKeeper, cause: string, recoverable: boolean): void {
    if (this.host.stopped()) return;
    const logger = this.host.logger();
    if (this.lease === lease) {
      this.lease = undefined;
      // valid() is already false; listeners run after the caller (often canServe) returns.
      queueMicrotask(() => this.healthListeners.emit('lease-lost'));
      if (recoverable) {
        this.recovering = lease;
        logger.warn(
          { lease: lease.id, cause },
          'etcd lease not provably alive: fenced; keeping the lease while etcd may still hold it',
        );
        return;
      }
      logger.warn({ lease: lease.id, cause }, 'etcd lease lost: fencing and re-registering');
    } else if (this.recovering === lease) {
      this.recovering = undefined;
      logger.warn({ lease: lease.id, cause }, 'etcd lease not recovered: re-registering');
    } else return;
    lease.stop();
    this.staleLeases.add(lease.id);
    this.reregister();
  }

  /** A keep-alive proved the fenced lease alive: serve again on it, same incarnation. */
  private restored(lease: EtcdLeaseKeeper): void {
    if (this.recovering !== lease || this.host.stopped()) return;
    this.recovering = undefined;
    this.lease = lease;
    this.host.logger().info({ lease: lease.id }, 'etcd lease proven alive again: unfenced');
    this.healthListeners.emit('lease-restored');
    // A status written meanwhile (markLeaving while fenced) was not stored: store it now.
    void this.rewriteMember(lease);
  }

  private async rewriteMember(lease: EtcdLeaseKeeper): Promise<void> {
    if (!this.host.leaving()) return;
    const key = this.host.keys('markLeaving').member(this.host.self('markLeaving').id);
    await this.host
      .client('markLeaving')
      .kv.put({ key, value: this.host.memberValue(), lease: lease.id })
      .catch((err: unknown) =>
        this.host.logger().debug({ err }, 'could not rewrite the member key'),
      );
  }

  /** Revokes the stale leases, then registers again after a jittered, streak-scaled delay. */
  private reregister(): void {
    this.fenceStreak =
      Date.now() - this.registeredAt < FENCE_STREAK_WINDOW_MS ? this.fenceStreak + 1 : 0;
    const backoff = new JitteredBackoff(REREGISTER_BACKOFF_INITIAL_MS, REREGISTER_BACKOFF_MAX_MS);
    backoff.skip(this.fenceStreak);
    const firstDelayMs = backoff.next();
    this.host
      .logger()
      .info(
        { fenceStreak: this.fenceStreak, firstDelayMs: Math.round(firstDelayMs) },
        're-registering after a fence',
      );
    void this.register(undefined, backoff, firstDelayMs).then(
      () => {
        if (!this.host.stopped()) this.healthListeners.emit('lease-restored');
      },
      (err) => this.host.logger().debug({ err }, 're-registration stopped'),
    );
  }

  private async revokeStale(client: Etcd3): Promise<void> {
    for (const id of [...this.staleLeases]) {
      await revokeLease(client, id, this.host.options.requestTimeoutMs);
      this.staleLeases.delete(id);
    }
  }
}

/** Registration setbacks that are not failures: etcd answered, the member only has to wait. */
function expectedWait(err: unknown): boolean {
  return MemberKeyHeldError.is(err) || RegistrationConflictError.is(err);
}

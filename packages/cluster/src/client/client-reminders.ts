import {
  DeadLetterError,
  EndpointUnavailableError,
  type GranaryError,
  LinkLostError,
  PeerNotReadingError,
  PID,
  TimeoutError,
  type ActorSystem,
} from '@granary/core';
import { ClusterStoppedError, DeadlineExceededError, NoHostError } from '../errors';
import { checkIdentity } from '../grains/grain-identity';
import { JitteredBackoff } from '../internal/jittered-backoff';
import type { Member, Topology } from '../membership/topology';
import { ownerOf } from '../placement/owner-of';
import { RemindersBusyError } from '../reminders/errors';
import { checkName, specOf } from '../reminders/grain-reminders';
import { REMINDER_OPS_ACTOR, type ReminderOp } from '../reminders/internal/reminder-ops';
import type {
  GrainReminders,
  JobOutcome,
  ReminderInfo,
  ReminderOptions,
} from '../reminders/reminder';

/** First delay before an operation is tried again; it doubles up to RETRY_MAX_MS. */
const RETRY_FIRST_MS = 20;
/** A member that refused or could not be reached is asked again at least this often. */
const RETRY_MAX_MS = 500;

/** What a client's reminders handle needs of the client. */
export interface ReminderRelay {
  readonly system: ActorSystem;
  /** The deadline of each operation, retries included (the client's requestTimeoutMs). */
  readonly timeoutMs: number;
  topology(): Topology;
  shardOf(kind: string, identity: string): number;
  /** True once the client is closed. */
  closed(): boolean;
}

/**
 * The reminders of one grain, for a program that is not a member (`GranaryClient.reminders`).
 * The client holds no reminder store: each operation is run by a member (the grain's shard
 * owner when the client knows it, so the owner schedules a change without another hop; any
 * other member otherwise), which stores it and tells the owner, as `cluster.reminders` does.
 * Arguments are checked here first, so a mistake fails at once, typed, without a round trip.
 */
export class ClientReminders implements GrainReminders {
  constructor(
    private readonly relay: ReminderRelay,
    private readonly kind: string,
    private readonly id: string,
  ) {}

  set(name: string, options: ReminderOptions): Promise<void> {
    return this.run(
      'set',
      name,
      () => {
        checkName(name);
        // The member computes the schedule on the store's clock; this only checks the options.
        specOf(options, Date.now());
      },
      options,
    ).then(() => undefined);
  }

  delete(name: string): Promise<boolean> {
    return this.run('delete', name, () => checkName(name)) as Promise<boolean>;
  }

  list(): Promise<ReminderInfo[]> {
    return this.run('list', undefined, () => undefined) as Promise<ReminderInfo[]>;
  }

  async outcome(name: string): Promise<JobOutcome | undefined> {
    const o = (await this.run('outcome', name, () => checkName(name))) as JobOutcome | null;
    return o ?? undefined;
  }

  private run(
    op: ReminderOp['$reminderOp'],
    name: string | undefined,
    check: () => void,
    options?: ReminderOptions,
  ): Promise<unknown> {
    try {
      if (this.relay.closed())
        throw new ClusterStoppedError(`reminders of ${this.kind}/${this.id}`);
      checkIdentity(this.id);
      check();
    } catch (err) {
      return Promise.reject(err as Error);
    }
    const message: ReminderOp = {
      $reminderOp: op,
      kind: this.kind,
      id: this.id,
      ...(name === undefined ? {} : { name }),
      ...(options === undefined ? {} : { options }),
    };
    return this.send(message);
  }

  /**
   * Sends the operation to a member and retries, on the next member, what did not run there
   * (no link, a member leaving or busy), within the deadline. `set` and `delete` are retried
   * also when the link broke after sending: both leave the same result when run twice (a
   * `delete` run twice answers false the second time).
   */
  private async send(message: ReminderOp): Promise<unknown> {
    const { system, timeoutMs } = this.relay;
    const deadline = system.clock.monotonic() + timeoutMs;
    const backoff = new JitteredBackoff(RETRY_FIRST_MS, RETRY_MAX_MS, system.random);
    let attempts = 0;
    let last: unknown;
    for (;;) {
      const left = deadline - system.clock.monotonic();
      if (left <= 0) throw this.expired(attempts, last);
      const target = this.target(attempts);
      if (target !== undefined) {
        attempts++;
        try {
          return await system.root.request(new PID(target.address, REMINDER_OPS_ACTOR), message, {
            timeoutMs: left,
          });
        } catch (err) {
          if (TimeoutError.is(err)) throw this.expired(attempts, err);
          if (!retried(err)) throw err;
          last = err;
        }
      }
      if (this.relay.closed())
        throw new ClusterStoppedError(`reminders of ${this.kind}/${this.id}`);
      const pause = Math.min(backoff.next(), deadline - system.clock.monotonic());
      if (pause > 0) await new Promise<void>((resolve) => system.timers.schedule(pause, resolve));
    }
  }

  /** The member to ask on attempt `n`: the owner first, then the others in turn. */
  private target(n: number): Member | undefined {
    const topology = this.relay.topology();
    const up = topology.members.filter((m) => m.status === 'up');
    if (up.length === 0) return undefined;
    const owner = ownerOf(this.kind, this.relay.shardOf(this.kind, this.id), topology);
    const order = owner === undefined ? up : [owner, ...up.filter((m) => m.id !== owner.id)];
    return order[n % order.length];
  }

  private expired(attempts: number, cause: unknown): GranaryError {
    const { timeoutMs } = this.relay;
    if (attempts === 0) {
      const details = { dropped: 0, fencedAnswers: 0, leaving: 0, membershipUnavailable: false };
      return new NoHostError(this.kind, this.id, timeoutMs, 0, { ...details, noMembers: true });
    }
    return DeadlineExceededError.of(this.kind, this.id, timeoutMs, attempts, { cause });
  }
}

/** Errors after which the operation did not run on that member, or may run again safely. */
function retried(err: unknown): boolean {
  return (
    EndpointUnavailableError.is(err) ||
    LinkLostError.is(err) ||
    PeerNotReadingError.is(err) ||
    DeadLetterError.is(err) ||
    RemindersBusyError.is(err) ||
    ClusterStoppedError.is(err)
  );
}

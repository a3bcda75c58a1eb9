import type { TimerHandle } from '@granary/core';
import { ReminderFencedError } from './errors';
import { jobBackoffMs, nextFire } from './internal/next-fire';
import type { JobOutcome, ReminderFire } from './reminder';
import type { ClaimResult, StoredReminder } from './reminder-store';
import type { ReminderCounters } from './reminder-stats';

/** A store call failed: the reminder tries again this much later (ms). */
export const STORE_RETRY_MS = 250;

/** What a loaded reminder needs of its member (the ReminderService). */
export interface ReminderHost {
  readonly counters: ReminderCounters;
  /** Epoch ms now (the system clock). */
  now(): number;
  /** Runs `r.onTimer()` `delayMs` from now (the system's timer wheel). */
  schedule(delayMs: number, r: LiveReminder): TimerHandle;
  /**
   * Takes one of the member's fire slots (maxFiresInFlight), held until the claim fails or the
   * fire's delivery ends. False: none free; the host calls `r.resume()` when one is.
   */
  admit(r: LiveReminder): boolean;
  /** Gives back a slot taken by `admit` whose claim did not lead to a delivery. */
  release(): void;
  /** Claims one tick (batched with the shard's other claims of this turn). */
  claim(r: LiveReminder, tick: number): Promise<ClaimResult>;
  /**
   * Calls the grain; resolves with undefined when its turn ended without throwing. Gives back
   * the fire's slot when the call ends.
   */
  deliver(r: LiveReminder, fire: ReminderFire): Promise<Error | undefined>;
  /** Records a job's outcome (fenced); resolves false when the job was replaced meanwhile. */
  finish(r: LiveReminder, outcome: JobOutcome): Promise<boolean>;
  /** The reminder is gone (deleted, a job finished): forget it. */
  forget(r: LiveReminder): void;
  /** Its schedule was replaced in the store: read it again. */
  reread(r: LiveReminder): void;
  /** The shard's fence refused this member: it is no longer the owner. */
  fenced(r: LiveReminder): void;
  /** Logs a store failure once per outage. */
  storeFailed(err: unknown): void;
  /** Resolves `ms` from now (the system's timer wheel). */
  sleep(ms: number): Promise<void>;
}

/**
 * One reminder or job loaded by the owner of its shard: its own timer-wheel target (no closure
 * per fire). One fire at a time: claim the tick (a fenced compare-and-set in the store), then
 * call the grain, then plan the next one; a periodic reminder does not wait for the grain's
 * turn (each tick is at most once, and a slow grain must not delay the schedule), a job does.
 */
export class LiveReminder {
  private timer: TimerHandle | undefined = undefined;
  /** A claim or a job attempt is in flight. */
  private busy = false;
  private stopped = false;
  /** Jobs: when the next attempt may start (epoch ms). */
  private retryAt = 0;

  constructor(
    private readonly host: ReminderHost,
    readonly kind: string,
    readonly shard: number,
    public stored: StoredReminder,
  ) {}

  get id(): string {
    return this.stored.id;
  }

  get name(): string {
    return this.stored.name;
  }

  get job(): boolean {
    return this.stored.spec.periodMs === 0;
  }

  /** Takes a newer schedule (same or later tick count) and plans again. */
  replace(stored: StoredReminder): void {
    const last = Math.max(stored.last, this.stored.last);
    this.stored = { ...stored, last };
    this.retryAt = 0;
    if (!this.busy) this.plan();
  }

  /** Stops every timer; an in-flight fire finishes but plans nothing. */
  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** When this reminder is next due (epoch ms): a job's next attempt, a reminder's next tick. */
  nextDueAt(now: number): number {
    const s = this.stored;
    if (this.job) return Math.max(s.spec.dueAt, this.retryAt);
    const fire = nextFire(s.spec, s.t0, s.last, now);
    return 'waitUntil' in fire ? fire.waitUntil : fire.dueAt;
  }

  /**
   * Plans the next fire: now if due and a fire slot is free, else a timer (not due) or a place
   * in the host's queue (no slot: the fire is planned again, late, when one frees).
   */
  plan(): void {
    if (this.stopped) return;
    this.timer?.cancel();
    this.timer = undefined;
    const now = this.host.now();
    const s = this.stored;
    if (this.job) {
      const due = Math.max(s.spec.dueAt, this.retryAt);
      if (due > now) this.timer = this.host.schedule(due - now, this);
      else if (this.host.admit(this)) void this.attempt(due, now);
      return;
    }
    const fire = nextFire(s.spec, s.t0, s.last, now);
    if ('waitUntil' in fire) this.timer = this.host.schedule(fire.waitUntil - now, this);
    else if (this.host.admit(this)) void this.tick(fire.tick, fire.dueAt, fire.skipped);
  }

  onTimer(): void {
    this.timer = undefined;
    if (!this.busy) this.plan();
  }

  /** A fire slot is free: plan again (the tick due now, the catch-up policy applied). */
  resume(): void {
    if (!this.busy) this.plan();
  }

  private async tick(tick: number, dueAt: number, skipped: number): Promise<void> {
    this.busy = true;
    const host = this.host;
    const result = await this.claim(tick);
    if (result === 'ok') {
      const firedAt = host.now();
      host.counters.fired++;
      host.counters.skipped += skipped;
      host.counters.tardy(firedAt - dueAt);
      const fire: ReminderFire = {
        $reminder: this.name,
        tick,
        dueAt,
        firedAt,
        skipped,
        job: false,
        attempt: 1,
        ...(this.stored.spec.data === undefined ? {} : { data: this.stored.spec.data }),
      };
      void host.deliver(this, fire); // counted by the host; a tick is never fired again
    } else host.release();
    this.busy = false;
    this.after(result, tick);
  }

  private async attempt(dueAt: number, now: number): Promise<void> {
    this.busy = true;
    const host = this.host;
    const s = this.stored;
    const tick = s.last + 1;
    const result = await this.claim(tick);
    if (result !== 'ok') {
      host.release();
      this.busy = false;
      return this.after(result, tick);
    }
    const attempt = tick - s.t0 + 1;
    host.counters.fired++;
    if (attempt > 1) host.counters.jobRetries++;
    else host.counters.tardy(now - dueAt);
    const error = await host.deliver(this, {
      $reminder: this.name,
      tick,
      dueAt: s.spec.dueAt,
      firedAt: now,
      skipped: 0,
      job: true,
      attempt,
      ...(s.spec.data === undefined ? {} : { data: s.spec.data }),
    });
    this.stored = { ...this.stored, last: Math.max(this.stored.last, tick) };
    if (error === undefined || attempt >= s.spec.maxAttempts) {
      const outcome: JobOutcome = {
        status: error === undefined ? 'done' : 'failed',
        attempts: attempt,
        at: host.now(),
        ...(error === undefined ? {} : { error: error.message }),
      };
      await this.record(outcome);
      return;
    }
    this.retryAt = host.now() + jobBackoffMs(s.spec, attempt);
    this.busy = false;
    this.plan();
  }

  /** Records a job's outcome, retrying while the store is down (still owner). */
  private async record(outcome: JobOutcome): Promise<void> {
    const host = this.host;
    for (;;) {
      try {
        if (await host.finish(this, outcome)) {
          if (outcome.status === 'done') host.counters.jobsDone++;
          else host.counters.jobsFailed++;
          host.forget(this);
        } else {
          this.busy = false;
          host.reread(this); // replaced meanwhile: its new schedule runs
        }
        return;
      } catch (err) {
        if (ReminderFencedError.is(err)) return this.lost();
        host.counters.storeErrors++;
        host.storeFailed(err);
        if (this.stopped) return;
        await host.sleep(STORE_RETRY_MS);
      }
    }
  }

  /** Claims a tick; a store failure resolves 'failed' after scheduling a retry. */
  private async claim(tick: number): Promise<ClaimResult | 'failed' | 'fenced'> {
    try {
      return await this.host.claim(this, tick);
    } catch (err) {
      if (ReminderFencedError.is(err)) return 'fenced';
      this.host.counters.storeErrors++;
      this.host.storeFailed(err);
      return 'failed';
    }
  }

  private lost(): void {
    this.host.counters.fenced++;
    this.host.fenced(this);
  }

  /** After a claim: go on, retry later, or stop. */
  private after(result: ClaimResult | 'failed' | 'fenced', tick: number): void {
    const host = this.host;
    switch (result) {
      case 'ok':
        this.stored = { ...this.stored, last: Math.max(this.stored.last, tick) };
        return this.plan();
      case 'taken':
        host.counters.taken++;
        this.stored = { ...this.stored, last: Math.max(this.stored.last, tick) };
        return host.reread(this); // the store knows the real last tick
      case 'gone':
        return host.forget(this);
      case 'stale':
        return host.reread(this);
      case 'fenced':
        return this.lost();
      case 'failed':
        if (!this.stopped) {
          this.timer?.cancel();
          this.timer = host.schedule(STORE_RETRY_MS, this);
        }
    }
  }
}

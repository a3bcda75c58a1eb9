import { context } from '@opentelemetry/api';
import { GrainError } from '../../errors';
import type { GrainCallOptions } from '../../grains/grain';
import type { ClusterLogger } from '../../internal/logger';
import { startFireSpan } from '../../telemetry/reminder-spans';
import { endSpan, type ClusterTelemetry } from '../../telemetry/telemetry';
import type { LiveReminder } from '../live-reminder';
import type { ReminderFire } from '../reminder';
import type { ReminderCounters } from '../reminder-stats';

/** What fire delivery needs from the reminder service. */
export interface FireDeliveryDeps {
  readonly maxFiresInFlight: number;
  readonly deliveryTimeoutMs: number;
  readonly telemetry: ClusterTelemetry;
  readonly logger: ClusterLogger;
  readonly counters: ReminderCounters;
  /** A grain call (the member's caller: the one retry loop). */
  request(kind: string, id: string, message: unknown, options: GrainCallOptions): Promise<unknown>;
}

/**
 * The fires of a member's reminders on their way to the grains: a bound on fires in flight
 * (a slot is taken before the claim and given back when the delivery ends, so a burst of due
 * ticks is claimed only as fast as it can be delivered: a claimed tick is never fired again),
 * the order in which waiting reminders get a slot, and each delivery as a grain call (a span
 * per fire when tracing).
 */
export class FireDelivery {
  /** Fires claimed and not yet answered: a graceful leave waits for them (each has its deadline). */
  private readonly delivering = new Set<Promise<Error | undefined>>();
  /** Fire slots taken (admit) and not given back: claims in flight and fires in delivery. */
  private inFlight = 0;
  /** Reminders due while every slot was taken, in the order they came due. */
  private readonly waiting = new Set<LiveReminder>();

  constructor(private readonly deps: FireDeliveryDeps) {}

  /** Takes a slot for `r`'s next fire; false (and `r` waits for `resume`) when none is free. */
  admit(r: LiveReminder): boolean {
    if (this.inFlight < this.deps.maxFiresInFlight) {
      this.inFlight++;
      return true;
    }
    this.waiting.add(r);
    return false;
  }

  /** Gives a slot back; the reminders that waited go in the order they came due. */
  release(): void {
    this.inFlight--;
    // Each takes a slot again in plan (or waits again, or, when no longer due, sets its timer).
    const max = this.deps.maxFiresInFlight;
    for (const r of this.waiting) {
      if (this.inFlight >= max) break;
      this.waiting.delete(r);
      r.resume();
    }
  }

  /** Delivers a claimed fire; its slot is given back when the call ends. */
  deliver(r: LiveReminder, fire: ReminderFire): Promise<Error | undefined> {
    const p = this.call(r, fire);
    this.delivering.add(p);
    void p.finally(() => {
      this.delivering.delete(p);
      this.release();
    });
    return p;
  }

  /** Resolves when every fire claimed here has been answered or failed. */
  async settled(): Promise<void> {
    while (this.delivering.size > 0) await Promise.allSettled([...this.delivering]);
  }

  /** Forgets the waiting reminders (the member stops). */
  stop(): void {
    this.waiting.clear();
  }

  private async call(r: LiveReminder, fire: ReminderFire): Promise<Error | undefined> {
    const { deps } = this;
    const options = {
      timeoutMs: deps.deliveryTimeoutMs,
      idempotent: fire.job, // a job is at least once; a tick at most once
    };
    const telemetry = deps.telemetry;
    const scope = telemetry.tracing
      ? startFireSpan(telemetry, r.kind, r.id, fire, r.stored.spec.trace)
      : undefined;
    try {
      if (scope === undefined) await deps.request(r.kind, r.id, fire, options);
      else {
        // The call runs in the fire span's context: the call and the turn are its children.
        await context.with(scope.context, () => deps.request(r.kind, r.id, fire, options));
        endSpan(scope.span);
      }
      deps.counters.delivered++;
      return undefined;
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      if (scope !== undefined) endSpan(scope.span, e);
      if (GrainError.is(e)) deps.counters.grainErrors++;
      else deps.counters.undelivered++;
      deps.logger.debug(
        { err: e, grain: `${r.kind}/${r.id}`, reminder: r.name, tick: fire.tick },
        'reminder fire failed',
      );
      return e;
    }
  }
}

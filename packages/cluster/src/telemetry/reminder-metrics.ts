import type { BatchObservableResult, Histogram, Meter, Observable } from '@opentelemetry/api';
import { ATTR_GRAIN_KIND, ATTR_OUTCOME, ATTR_REASON, ATTR_REMINDER_TYPE } from './attributes';

/** Buckets of the tardiness histogram (s): 1 ms to 60 s (a fire waits for a lease to expire). */
const TARDINESS_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];

/** The reminder counters the instruments read (ReminderCounters). */
export interface ReminderCounterValues {
  readonly fired: number;
  readonly delivered: number;
  readonly grainErrors: number;
  readonly undelivered: number;
  readonly skipped: number;
  readonly taken: number;
  readonly fenced: number;
  readonly storeErrors: number;
  readonly jobRetries: number;
  readonly jobsDone: number;
  readonly jobsFailed: number;
}

/** Where the reminder instruments read their values (the member's ReminderService). */
export interface ReminderMetricSources {
  readonly counters: ReminderCounterValues;
  /** Per kind, the periodic reminders and the jobs loaded on this member. */
  loadedByKind(): Iterable<[string, { reminders: number; jobs: number }]>;
}

/**
 * The member's reminder instruments (docs/metrics.md): counters observed from the counters the
 * service keeps anyway (one batch callback per collection), and the tardiness histogram,
 * recorded once per fire.
 */
export class ReminderMetrics {
  /** Lateness of each fire (firedAt - dueAt), seconds. */
  readonly tardiness: Histogram;
  private readonly observables: Record<string, Observable>;
  private readonly callback: (result: BatchObservableResult) => void;

  constructor(
    private readonly meter: Meter,
    private readonly sources: ReminderMetricSources,
  ) {
    const counter = (name: string, unit: string, description: string) =>
      meter.createObservableCounter(name, { unit, description });
    this.tardiness = meter.createHistogram('granary.reminder.tardiness', {
      description: 'Lateness of reminder fires and first job attempts (claimed - due)',
      unit: 's',
      advice: { explicitBucketBoundaries: TARDINESS_BUCKETS },
    });
    this.observables = {
      fires: counter(
        'granary.reminder.fires',
        '{fire}',
        'Reminder ticks and job attempts delivered to their grain, by outcome (delivered, grain_error, undelivered)',
      ),
      skipped: counter(
        'granary.reminder.ticks.skipped',
        '{tick}',
        "Missed ticks not fired under catchUp 'skip' or 'once'",
      ),
      refused: counter(
        'granary.reminder.claims.refused',
        '{claim}',
        'Tick claims refused by the store, by reason (taken, fenced)',
      ),
      storeErrors: counter(
        'granary.reminder.store.errors',
        '{error}',
        'Reminder store calls that failed (retried)',
      ),
      jobs: counter(
        'granary.reminder.jobs',
        '{job}',
        'One-off jobs finished, by outcome (done, failed)',
      ),
      jobRetries: counter(
        'granary.reminder.job.retries',
        '{attempt}',
        'Job attempts after the first',
      ),
      loaded: meter.createObservableUpDownCounter('granary.reminders.loaded', {
        unit: '{reminder}',
        description: 'Reminders and jobs loaded on this member (the shards it owns), by kind',
      }),
    };
    this.callback = (result) => this.observe(result);
    meter.addBatchObservableCallback(this.callback, Object.values(this.observables));
  }

  /** Stops observing (the member shut down). */
  close(): void {
    this.meter.removeBatchObservableCallback(this.callback, Object.values(this.observables));
  }

  private observe(result: BatchObservableResult): void {
    const o = this.observables;
    const c = this.sources.counters;
    result.observe(o.fires!, c.delivered, { [ATTR_OUTCOME]: 'delivered' });
    result.observe(o.fires!, c.grainErrors, { [ATTR_OUTCOME]: 'grain_error' });
    result.observe(o.fires!, c.undelivered, { [ATTR_OUTCOME]: 'undelivered' });
    result.observe(o.skipped!, c.skipped);
    result.observe(o.refused!, c.taken, { [ATTR_REASON]: 'taken' });
    result.observe(o.refused!, c.fenced, { [ATTR_REASON]: 'fenced' });
    result.observe(o.storeErrors!, c.storeErrors);
    result.observe(o.jobs!, c.jobsDone, { [ATTR_OUTCOME]: 'done' });
    result.observe(o.jobs!, c.jobsFailed, { [ATTR_OUTCOME]: 'failed' });
    result.observe(o.jobRetries!, c.jobRetries);
    for (const [kind, n] of this.sources.loadedByKind()) {
      result.observe(o.loaded!, n.reminders, {
        [ATTR_GRAIN_KIND]: kind,
        [ATTR_REMINDER_TYPE]: 'reminder',
      });
      result.observe(o.loaded!, n.jobs, { [ATTR_GRAIN_KIND]: kind, [ATTR_REMINDER_TYPE]: 'job' });
    }
  }
}

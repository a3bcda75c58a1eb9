import { InvalidArgumentError } from '@granary/core';
import {
  CATCH_UP_POLICIES,
  type GrainReminders,
  type JobOutcome,
  type ReminderInfo,
  type ReminderOptions,
} from './reminder';
import type { ReminderSpec, StoredReminder } from './reminder-store';
import { DEFAULT_BACKOFF_MS, DEFAULT_MAX_ATTEMPTS, MIN_PERIOD_MS } from './reminders-options';

/** What a grain's reminders handle needs of the member's reminder service. */
export interface RemindersBackend {
  now(): number;
  shardOf(kind: string, id: string): number;
  put(kind: string, shard: number, id: string, name: string, spec: ReminderSpec): Promise<void>;
  remove(kind: string, shard: number, id: string, name: string): Promise<boolean>;
  list(kind: string, shard: number, id: string): Promise<StoredReminder[]>;
  outcome(kind: string, shard: number, id: string, name: string): Promise<JobOutcome | undefined>;
}

/** The reminders of one grain (`ctx.reminders`, `cluster.reminders(kind, id)`). */
export class GrainRemindersHandle implements GrainReminders {
  private readonly shard: number;

  constructor(
    private readonly backend: RemindersBackend,
    private readonly kind: string,
    private readonly id: string,
  ) {
    this.shard = backend.shardOf(kind, id);
  }

  set(name: string, options: ReminderOptions): Promise<void> {
    let spec: ReminderSpec;
    try {
      checkName(name);
      spec = specOf(options, this.backend.now());
    } catch (err) {
      return Promise.reject(err as Error);
    }
    return this.backend.put(this.kind, this.shard, this.id, name, spec);
  }

  delete(name: string): Promise<boolean> {
    try {
      checkName(name);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    return this.backend.remove(this.kind, this.shard, this.id, name);
  }

  async list(): Promise<ReminderInfo[]> {
    const stored = await this.backend.list(this.kind, this.shard, this.id);
    return stored.map((r) => ({
      name: r.name,
      dueAt: r.spec.dueAt,
      periodMs: r.spec.periodMs,
      catchUp: r.spec.catchUp,
      lastTick: r.last,
      ...(r.spec.data === undefined ? {} : { data: r.spec.data }),
    }));
  }

  outcome(name: string): Promise<JobOutcome | undefined> {
    return this.backend.outcome(this.kind, this.shard, this.id, name);
  }
}

function checkName(name: unknown): void {
  if (typeof name !== 'string' || name.length === 0) {
    throw new InvalidArgumentError('name', 'a reminder needs a non-empty string name');
  }
}

/** The stored schedule of `options`, validated (each error names the option). */
export function specOf(o: ReminderOptions, now: number): ReminderSpec {
  if (o === null || typeof o !== 'object') {
    throw new InvalidArgumentError('options', 'reminders.set needs options');
  }
  if ((o.dueAt === undefined) === (o.dueInMs === undefined)) {
    throw new InvalidArgumentError('dueAt', 'give exactly one of dueAt and dueInMs');
  }
  const dueAt = o.dueAt ?? now + o.dueInMs!;
  if (!Number.isFinite(dueAt)) throw new InvalidArgumentError('dueAt', `not a time: ${dueAt}`);
  const periodMs = o.periodMs ?? 0;
  if (o.periodMs !== undefined && !(Number.isFinite(periodMs) && periodMs >= MIN_PERIOD_MS)) {
    throw new InvalidArgumentError('periodMs', `must be >= ${MIN_PERIOD_MS}, got ${periodMs}`);
  }
  if (periodMs > 0 && !CATCH_UP_POLICIES.includes(o.catchUp!)) {
    throw new InvalidArgumentError(
      'catchUp',
      `a periodic reminder needs catchUp: 'skip' | 'once' | 'all', got ${String(o.catchUp)}`,
    );
  }
  const maxAttempts = o.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  if (!(Number.isInteger(maxAttempts) && maxAttempts >= 1)) {
    throw new InvalidArgumentError('maxAttempts', `must be an integer >= 1, got ${maxAttempts}`);
  }
  const backoffMs = o.backoffMs ?? DEFAULT_BACKOFF_MS;
  if (!(Number.isFinite(backoffMs) && backoffMs >= 0)) {
    throw new InvalidArgumentError('backoffMs', `must be >= 0, got ${backoffMs}`);
  }
  if (o.data !== undefined) JSON.stringify(o.data); // throws on what JSON cannot carry
  return {
    dueAt: Math.round(dueAt),
    periodMs: Math.round(periodMs),
    catchUp: o.catchUp ?? 'all',
    maxAttempts,
    backoffMs,
    ...(o.data === undefined ? {} : { data: o.data }),
  };
}

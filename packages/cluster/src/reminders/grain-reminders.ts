import { InvalidArgumentError } from '@granary/core';
import { identityProblem } from '../grains/grain-identity';
import {
  CATCH_UP_POLICIES,
  type GrainReminders,
  type JobOutcome,
  type ReminderInfo,
  type ReminderOptions,
} from './reminder';
import type { ReminderSpec, StoredReminder } from './reminder-store';
import { DEFAULT_BACKOFF_MS, DEFAULT_MAX_ATTEMPTS, MIN_PERIOD_MS } from './reminders-options';
import { unknownOptionOf } from '@granary/core/internal';

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

/**
 * A reminder's name follows an identity's rules: it is stored as UTF-8 beside it and comes back
 * in every fire, so a lone surrogate would come back as U+FFFD, another name than the one set.
 */
export function checkName(name: unknown): void {
  const problem = identityProblem(name);
  if (problem !== undefined) throw new InvalidArgumentError('name', `a reminder name ${problem}`);
}

/** The stored schedule of `options`, validated (each error names the option). */
export function specOf(o: ReminderOptions, now: number): ReminderSpec {
  if (o === null || typeof o !== 'object') {
    throw new InvalidArgumentError('options', 'reminders.set needs options');
  }
  // Options often come from JavaScript or a config object: a misspelt `period` made a periodic
  // reminder a one-off job, silently.
  const unknown = unknownOptionOf('reminders.set', o, REMINDER_OPTION_KEYS);
  if (unknown !== undefined) throw new InvalidArgumentError(unknown.name, unknown.detail);
  if ((o.dueAt === undefined) === (o.dueInMs === undefined)) {
    throw new InvalidArgumentError('dueAt', 'give exactly one of dueAt and dueInMs');
  }
  // A string ('1000' from the environment) was added to `now` as text, and refused as 'dueAt:
  // not a time: 179...1000' naming the option not given.
  const given = o.dueAt === undefined ? 'dueInMs' : 'dueAt';
  const when: unknown = o.dueAt ?? o.dueInMs;
  if (typeof when !== 'number' || !Number.isFinite(when)) {
    throw new InvalidArgumentError(given, `must be a finite number, got ${shown(when)}`);
  }
  const dueAt = o.dueAt ?? now + when;
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
  if (o.data !== undefined) checkData(o.data);
  return {
    dueAt: Math.round(dueAt),
    periodMs: Math.round(periodMs),
    catchUp: o.catchUp ?? 'all',
    maxAttempts,
    backoffMs,
    ...(o.data === undefined ? {} : { data: o.data }),
  };
}

/** Every option of ReminderOptions (the compiler keeps this list complete). */
const REMINDER_OPTION_KEYS: Record<keyof ReminderOptions, true> = {
  dueAt: true,
  dueInMs: true,
  periodMs: true,
  catchUp: true,
  maxAttempts: true,
  backoffMs: true,
  data: true,
};

/**
 * `data` is stored as JSON: what JSON cannot carry is refused, typed. A bigint threw a bare
 * TypeError, and a function (JSON makes it nothing) was stored as no data at all.
 */
function checkData(data: unknown): void {
  let text: string | undefined;
  try {
    text = JSON.stringify(data);
  } catch (err) {
    throw new InvalidArgumentError('data', `must be JSON-serializable: ${(err as Error).message}`);
  }
  if (text === undefined) {
    throw new InvalidArgumentError('data', `must be JSON-serializable, got a ${typeof data}`);
  }
}

function shown(value: unknown): string {
  return typeof value === 'string' ? `'${value}' (a string)` : String(value);
}

import { SYSTEM_CLOCK, type Clock } from './clock';
import type { Logger, LogLevel } from './logger';

/** How long a throttle window lasts unless told otherwise: one summary line per second. */
const DEFAULT_INTERVAL_MS = 1000;

interface Window {
  level: LogLevel;
  /** Logged one by one so far in this window (up to `burst`). */
  logged: number;
  msg: string;
  fields: Record<string, unknown>;
  suppressed: number;
  timer: unknown;
}

/**
 * Logs repeated events without letting a flood through: the first `burst` events of a key are
 * logged as they are, later ones within the interval are only counted, and at the end of the interval one
 * summary line says how many there were (`count`, `intervalMs`, `total`), with the first one's
 * fields. A flood that goes on costs two lines per interval per key, not one per event. Used for
 * dead letters, retried grain calls, undelivered sends and refused handshakes.
 *
 * @example
 * const throttle = new LogThrottle(logger);
 * throttle.log('retry:NotOwner', 'debug', { kind, error }, 'grain call retried');
 */
export class LogThrottle {
  private readonly windows = new Map<string, Window>();
  private readonly totals = new Map<string, number>();

  constructor(
    private readonly logger: Logger,
    /** Length of a window (ms). */
    private readonly intervalMs: number = DEFAULT_INTERVAL_MS,
    /** Windows are timed on this clock. */
    private readonly clock: Clock = SYSTEM_CLOCK,
    /** Events of a key logged one by one per window before the rest are only counted. */
    private readonly burst = 1,
  ) {}

  /** Events of `key` seen so far (logged or not). */
  total(key: string): number {
    return this.totals.get(key) ?? 0;
  }

  /** Counts one event of `key`, and logs it unless one of its key was logged this interval. */
  log(key: string, level: LogLevel, fields: Record<string, unknown>, msg: string): void {
    this.totals.set(key, (this.totals.get(key) ?? 0) + 1);
    const w = this.windows.get(key);
    if (w !== undefined) {
      if (w.logged < this.burst) {
        w.logged++;
        this.logger[level](fields, msg);
      } else w.suppressed++;
      return;
    }
    this.logger[level](fields, msg);
    this.open(key, level, fields, msg);
  }

  /** Logs the summaries still pending and stops the timers (the owner is shutting down). */
  close(): void {
    for (const [key, w] of this.windows) {
      this.clock.clearTimer(w.timer);
      this.summarize(key, w);
    }
    this.windows.clear();
  }

  private open(key: string, level: LogLevel, fields: Record<string, unknown>, msg: string): void {
    const timer = this.clock.setTimer(() => {
      const w = this.windows.get(key);
      if (w === undefined) return;
      this.windows.delete(key);
      // A flood that goes on keeps one summary line per interval (and logs no new burst).
      if (this.summarize(key, w)) {
        this.open(key, w.level, w.fields, w.msg);
        this.windows.get(key)!.logged = this.burst;
      }
    }, this.intervalMs);
    (timer as { unref?: () => void } | undefined)?.unref?.();
    this.windows.set(key, { level, logged: 1, msg, fields, suppressed: 0, timer });
  }

  private summarize(key: string, w: Window): boolean {
    if (w.suppressed === 0) return false;
    this.logger[w.level](
      { ...w.fields, count: w.suppressed, intervalMs: this.intervalMs, total: this.total(key) },
      `${w.msg} (${w.suppressed} more like it in ${this.intervalMs} ms, not logged one by one)`,
    );
    return true;
  }
}

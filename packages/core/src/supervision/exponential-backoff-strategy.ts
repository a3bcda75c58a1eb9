import { InvalidOptionError } from '../errors';
import type { PID } from '../pid';
import type { RestartStatistics } from './restart-statistics';
import type { Supervisor, SupervisorStrategy } from './supervisor-strategy';

/** Options of ExponentialBackoffStrategy. */
export interface ExponentialBackoffOptions {
  /**
   * Delay before the first restart; doubles with each failure inside the window.
   * @default 100
   */
  initialBackoffMs?: number;
  /**
   * Upper bound of the delay.
   * @default 10000
   */
  maxBackoffMs?: number;
  /**
   * A failure more than this long after the previous one starts again from the initial delay.
   * @default 30000
   */
  backoffWindowMs?: number;
}

/** Defaults of {@link ExponentialBackoffOptions}. */
export const DEFAULT_EXPONENTIAL_BACKOFF_OPTIONS: Required<ExponentialBackoffOptions> = {
  initialBackoffMs: 100,
  maxBackoffMs: 10_000,
  backoffWindowMs: 30_000,
};

/**
 * Restarts the failed child after `initialBackoffMs × 2^(n-1)` (n = failures within the
 * window), capped at `maxBackoffMs`. The child's mailbox stays suspended meanwhile: messages
 * queue, none are lost. The delay runs on the shared timer wheel.
 */
export class ExponentialBackoffStrategy implements SupervisorStrategy {
  private readonly options: Required<ExponentialBackoffOptions>;

  constructor(options: ExponentialBackoffOptions = {}) {
    const o = { ...DEFAULT_EXPONENTIAL_BACKOFF_OPTIONS, ...options };
    for (const key of ['initialBackoffMs', 'maxBackoffMs', 'backoffWindowMs'] as const) {
      if (!(o[key] >= 0)) throw new InvalidOptionError(key, `${o[key]} < 0`);
    }
    this.options = o;
  }

  /** The delay before the restart after the `n`th failure in a row. */
  backoffFor(n: number): number {
    const { initialBackoffMs, maxBackoffMs } = this.options;
    return Math.min(maxBackoffMs, initialBackoffMs * 2 ** Math.max(0, n - 1));
  }

  handleFailure(
    supervisor: Supervisor,
    child: PID,
    stats: RestartStatistics,
    _reason: unknown,
    _message: unknown,
  ): void {
    const now = supervisor.timers.clock.now();
    if (stats.failuresWithin(this.options.backoffWindowMs, now) === 0) stats.reset();
    stats.fail(now);
    const delay = this.backoffFor(stats.failureCount);
    supervisor.timers.schedule(delay, () => supervisor.restartChildren(child));
  }
}

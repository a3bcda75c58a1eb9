import type { PID } from '../pid';
import { InvalidOptionError } from '../errors';
import { restartDecider, type Decider } from './directive';
import type { RestartStatistics } from './restart-statistics';
import type { Supervisor, SupervisorStrategy } from './supervisor-strategy';

/** Options of OneForOneStrategy and AllForOneStrategy. */
export interface RestartingStrategyOptions {
  /**
   * Restarts allowed within `withinMs`; one more failure stops the child instead. 0: never
   * restart (stop).
   * @default 10
   */
  maxRetries?: number;
  /**
   * The window of `maxRetries` (0: count every failure ever).
   * @default 10000
   */
  withinMs?: number;
  /**
   * Chooses the directive for a failure.
   * @default restartDecider (always restart)
   */
  decider?: Decider;
}

/** Defaults of {@link RestartingStrategyOptions}. */
export const DEFAULT_RESTARTING_STRATEGY_OPTIONS: Required<RestartingStrategyOptions> = {
  maxRetries: 10,
  withinMs: 10_000,
  decider: restartDecider,
};

/** Applies the directive for one failure to `targets` (shared by one-for-one and all-for-one). */
export function applyDirective(
  options: Required<RestartingStrategyOptions>,
  supervisor: Supervisor,
  child: PID,
  targets: PID[],
  stats: RestartStatistics,
  reason: unknown,
  message: unknown,
): void {
  switch (options.decider(reason, child)) {
    case 'resume':
      supervisor.resumeChildren(child);
      return;
    case 'restart':
      if (retriesExhausted(options, stats, supervisor.timers.clock.now())) {
        supervisor.stopChildren(...targets);
      } else supervisor.restartChildren(...targets);
      return;
    case 'stop':
      supervisor.stopChildren(...targets);
      return;
    case 'escalate':
      supervisor.escalateFailure(reason, message);
      return;
  }
}

function retriesExhausted(
  options: Required<RestartingStrategyOptions>,
  stats: RestartStatistics,
  now: number,
) {
  if (options.maxRetries === 0) return true;
  stats.fail(now);
  const failures =
    options.withinMs === 0 ? stats.failureCount : stats.failuresWithin(options.withinMs, now);
  return failures > options.maxRetries;
}

/** Validates and fills restarting-strategy options. */
export function restartingOptions(
  options: RestartingStrategyOptions,
): Required<RestartingStrategyOptions> {
  const o = { ...DEFAULT_RESTARTING_STRATEGY_OPTIONS, ...options };
  if (!(o.maxRetries >= 0)) throw new InvalidOptionError('maxRetries', `${o.maxRetries} < 0`);
  if (!(o.withinMs >= 0)) throw new InvalidOptionError('withinMs', `${o.withinMs} < 0`);
  return o;
}

/**
 * The directive applies to the failed child only.
 *
 * @example
 * Props.fromProducer(() => new Parent(), {
 *   supervisor: new OneForOneStrategy({ maxRetries: 3, withinMs: 1000 }),
 * });
 */
export class OneForOneStrategy implements SupervisorStrategy {
  private readonly options: Required<RestartingStrategyOptions>;

  constructor(options: RestartingStrategyOptions = {}) {
    this.options = restartingOptions(options);
  }

  handleFailure(
    supervisor: Supervisor,
    child: PID,
    stats: RestartStatistics,
    reason: unknown,
    message: unknown,
  ): void {
    applyDirective(this.options, supervisor, child, [child], stats, reason, message);
  }
}

/** The strategy of top-level actors and of parents that set none. */
export const DEFAULT_SUPERVISOR_STRATEGY: SupervisorStrategy = new OneForOneStrategy();

import type { PID } from '../pid';
import {
  applyDirective,
  restartingOptions,
  type RestartingStrategyOptions,
} from './one-for-one-strategy';
import type { RestartStatistics } from './restart-statistics';
import type { Supervisor, SupervisorStrategy } from './supervisor-strategy';

/**
 * A restart or stop applies to every child of the supervisor (siblings that depend on each
 * other); resume applies to the failed child only.
 */
export class AllForOneStrategy implements SupervisorStrategy {
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
    applyDirective(this.options, supervisor, child, supervisor.children, stats, reason, message);
  }
}

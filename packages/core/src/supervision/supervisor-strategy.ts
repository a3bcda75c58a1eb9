import type { PID } from '../pid';
import type { TimerWheel } from '../timer-wheel';
import type { RestartStatistics } from './restart-statistics';

/** What a strategy can do to the supervisor's children. */
export interface Supervisor {
  readonly children: PID[];
  /** The system's shared timer wheel (backoff), and through it the system's clock. */
  readonly timers: TimerWheel;
  resumeChildren(...pids: PID[]): void;
  restartChildren(...pids: PID[]): void;
  /** Stops them; watchers see `Terminated { why: 'failed' }`. */
  stopChildren(...pids: PID[]): void;
  /** Fails the supervisor itself with the child's reason (its own supervisor decides). */
  escalateFailure(reason: unknown, message: unknown): void;
}

/** Decides what happens when a child fails. Set per parent with `Props` `supervisor`. */
export interface SupervisorStrategy {
  handleFailure(
    supervisor: Supervisor,
    child: PID,
    stats: RestartStatistics,
    reason: unknown,
    message: unknown,
  ): void;
}

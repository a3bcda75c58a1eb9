import type { Logger } from '../logger';
import { Stop } from '../messages';
import type { PID } from '../pid';
import type { ProcessRegistry } from '../process-registry';
import type { SupervisorStrategy, Supervisor } from '../supervision/supervisor-strategy';
import type { TimerWheel } from '../timer-wheel';
import { RESTART, RESUME_MAILBOX, type Failure } from './system-messages';

/** Supervises the top-level actors (those spawned from `system.root`). */
export class Guardian implements Supervisor {
  /** The child whose failure is being handled (the target of an escalation). */
  private current: PID | undefined = undefined;

  constructor(
    private readonly registry: ProcessRegistry,
    readonly timers: TimerWheel,
    private readonly logger: Logger,
    private readonly strategy: SupervisorStrategy,
    private readonly topLevel: () => PID[],
  ) {}

  get children(): PID[] {
    return this.topLevel();
  }

  handle(failure: Failure): void {
    this.current = failure.who;
    try {
      this.strategy.handleFailure(
        this,
        failure.who,
        failure.stats,
        failure.reason,
        failure.message,
      );
    } finally {
      this.current = undefined;
    }
  }

  private tell(pids: PID[], message: unknown): void {
    for (const pid of pids) this.registry.get(pid).sendSystemMessage(pid, message);
  }

  resumeChildren(...pids: PID[]): void {
    this.tell(pids, RESUME_MAILBOX);
  }

  restartChildren(...pids: PID[]): void {
    this.tell(pids, RESTART);
  }

  stopChildren(...pids: PID[]): void {
    this.tell(pids, new Stop('failed'));
  }

  /** Nobody above the guardian: the failed top-level actor is stopped. */
  escalateFailure(reason: unknown): void {
    const who = this.current;
    this.logger.error({ actor: who?.toString(), err: reason }, 'failure escalated to the root');
    if (who !== undefined) this.stopChildren(who);
  }
}

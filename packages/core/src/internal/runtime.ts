import type { Clock } from '../clock';
import type { DeadLetters } from '../dead-letters';
import type { Dispatcher } from '../dispatcher';
import type { EventStream } from '../event-stream';
import type { Logger } from '../logger';
import type { PID } from '../pid';
import type { ProcessRegistry } from '../process-registry';
import type { TimerWheel } from '../timer-wheel';
import type { Failure } from './system-messages';

/**
 * What actors, futures and contexts need from their ActorSystem, as a type only, so the
 * runtime files do not import the system module (no import cycles).
 */
export interface Runtime {
  readonly name: string;
  readonly registry: ProcessRegistry;
  readonly deadLetters: DeadLetters;
  readonly dispatcher: Dispatcher;
  readonly timers: TimerWheel;
  readonly eventStream: EventStream;
  readonly logger: Logger;
  /** Time for deadlines, receive timeouts and the timer wheel. */
  readonly clock: Clock;
  /** True once shutdown() began. */
  readonly isShuttingDown: boolean;
  /** A top-level actor (no parent actor) started. */
  topLevelSpawned(pid: PID): void;
  /** A top-level actor stopped. */
  topLevelTerminated(pid: PID): void;
  /** A top-level actor failed: the guardian applies the system's strategy. */
  guardianFailure(failure: Failure): void;
}

import type { ReceiveFunc } from '../context';
import type { PID } from '../pid';
import { RestartStatistics } from '../supervision/restart-statistics';
import type { TimerHandle } from '../timer-wheel';

/**
 * The rarely used state of an actor, allocated on first use, so a plain actor stays small
 * (the spawn benchmark's bytes-per-actor target): watchers, stash, behaviors, receive timeout.
 */
export class CellExtras {
  /** Who watches this actor, by `address/id`. */
  watchers: Map<string, PID> | undefined = undefined;
  /** Whom this actor watches, by `address/id`. */
  watching: Map<string, PID> | undefined = undefined;
  stash: unknown[] | undefined = undefined;
  behaviors: ReceiveFunc[] | undefined = undefined;
  restartStats: RestartStatistics | undefined = undefined;
  /** Receive timeout in ms (0: off). */
  receiveTimeoutMs = 0;
  /** Monotonic clock time of the last influencing user message. */
  lastActivity = 0;
  receiveTimer: TimerHandle | undefined = undefined;
  /** A ReceiveTimeout is in the system lane: a slow actor gets one, not one per period. */
  timeoutQueued = false;
  /** When the queued ReceiveTimeout fired (a later `lastActivity` makes it stale). */
  firedAt = 0;
  /** Bound once per actor that uses receive timeouts. */
  onReceiveTimer: (() => void) | undefined = undefined;
  /** While trySend runs sender middleware: whether the target took the message (see tryThrough). */
  tried: boolean | undefined = undefined;
  /** User-visible system deliveries (ReceiveTimeout, watched Terminated) held while suspended. */
  deferred: unknown[] | undefined = undefined;

  stats(): RestartStatistics {
    return (this.restartStats ??= new RestartStatistics());
  }
}

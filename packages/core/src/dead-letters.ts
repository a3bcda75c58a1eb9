import { SYSTEM_CLOCK, type Clock } from './clock';
import { DeadLetterError } from './errors';
import type { EventStream } from './event-stream';
import { LogThrottle } from './log-throttle';
import type { Logger } from './logger';
import { Stop, Terminated, Unwatch, Watch } from './messages';
import type { PID } from './pid';
import { entryMessage, entryOf, entrySender } from './entry';
import type { Entry, Process } from './process';
import { FUTURE_PREFIX } from './internal/future-ids';
import type { ProcessRegistry } from './process-registry';

/** Published on the event stream for every message that could not be delivered. */
export class DeadLetterEvent {
  constructor(
    /** The intended target. */
    readonly pid: PID,
    readonly message: unknown,
    readonly sender: PID | undefined,
    /** `not-found`, `mailbox-full`, `stopped`, `late-reply`, ... */
    readonly reason: string,
  ) {}
}

/** Options of dead-letter logging. */
export interface DeadLetterOptions {
  /**
   * At most this many dead letters of one reason are logged one by one per second; the rest of
   * the second is one summary line with their count (all are counted and published).
   * @default 10
   */
  logPerSecond?: number;
}

/** Defaults of {@link DeadLetterOptions}. */
export const DEFAULT_DEAD_LETTER_OPTIONS: Required<DeadLetterOptions> = { logPerSecond: 10 };

/**
 * Where undeliverable messages go: each is counted (total and per reason), published as a
 * DeadLetterEvent, logged (throttled), and, if its sender is a request's future, that
 * request is rejected at once instead of waiting for its timeout.
 */
export class DeadLetters {
  /** Dead letters so far. */
  count = 0;
  /** Dead letters so far, per reason. */
  readonly byReason = new Map<string, number>();
  private readonly throttle: LogThrottle;
  /** Set by the system once the registry exists. @internal */
  registry: ProcessRegistry | undefined = undefined;

  constructor(
    private readonly eventStream: EventStream,
    logger: Logger,
    options: DeadLetterOptions = {},
    /** The throttle's window is on this clock. */
    clock: Clock = SYSTEM_CLOCK,
  ) {
    const { logPerSecond } = { ...DEFAULT_DEAD_LETTER_OPTIONS, ...options };
    this.throttle = new LogThrottle(logger, 1000, clock, logPerSecond);
  }

  /**
   * Records a message that could not be delivered to `pid`. If `sender` is a pending request,
   * it is rejected with `error` (default: DeadLetterError naming the target and reason).
   */
  publish(pid: PID, message: unknown, sender?: PID, reason = 'not-found', error?: Error): void {
    this.count++;
    this.byReason.set(reason, (this.byReason.get(reason) ?? 0) + 1);
    this.eventStream.publish(new DeadLetterEvent(pid, message, sender, reason));
    this.log(pid, message, sender, reason);
    if (sender !== undefined && this.registry !== undefined && isFutureId(sender.id)) {
      const failure = error ?? new DeadLetterError(pid.toString(), reason);
      // An Error as a reply rejects the future; a future that gave up dead-letters it
      // (reason late-reply), which cannot recurse because that reply has no sender.
      this.registry.get(sender).post(sender, entryOf(failure), false);
    }
  }

  private log(pid: PID, message: unknown, sender: PID | undefined, reason: string): void {
    this.throttle.log(
      `dead-letter:${reason}`,
      'info',
      {
        target: pid.toString(),
        sender: sender?.toString(),
        reason,
        messageType: (message as object | null)?.constructor?.name ?? typeof message,
      },
      'dead letter (deadLetterThrottle)',
    );
  }

  /** Logs the summaries still pending (the system is shutting down). */
  close(): void {
    this.throttle.close();
  }
}

function isFutureId(id: string): boolean {
  return id.startsWith(FUTURE_PREFIX);
}

/** The process of every PID that resolves to nothing. */
export class DeadLetterProcess implements Process {
  constructor(
    private readonly deadLetters: DeadLetters,
    private readonly registry: () => ProcessRegistry,
  ) {}

  post(pid: PID, entry: Entry): boolean {
    this.deadLetters.publish(pid, entryMessage(entry), entrySender(entry), 'not-found');
    return true;
  }

  sendSystemMessage(pid: PID, message: unknown): void {
    if (message instanceof Watch) {
      // Watching what does not exist answers at once, as Erlang's monitor does.
      const watcher = message.watcher;
      this.registry().get(watcher).sendSystemMessage(watcher, new Terminated(pid, 'not-found'));
      return;
    }
    // Unwatch / Terminated / Stop for something already gone are expected races, not losses.
    if (message instanceof Terminated || message instanceof Unwatch || message instanceof Stop) {
      return;
    }
    this.deadLetters.publish(pid, message, undefined, 'not-found');
  }

  stop(_pid: PID): void {}
}

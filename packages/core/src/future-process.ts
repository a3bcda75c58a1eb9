import { AbortError, InvalidArgumentError, TimeoutError } from './errors';
import { entryMessage } from './entry';
import { Envelope } from './internal/envelope';
import { promiseSettledBy, type Settlers } from './internal/settlers';
import type { Runtime } from './internal/runtime';
import { Terminated, Watch } from './messages';
import type { PID } from './pid';
import type { Entry, LocalProcess } from './process';
import type { ProcessRegistry, SequencedProcess } from './process-registry';
import type { TimerHandle, TimerTarget } from './timer-wheel';

/** Options of a request. */
export interface RequestOptions {
  /**
   * Reject with TimeoutError if no reply arrives within this many ms (on the shared timer
   * wheel, never a setTimeout per request). Omitted: wait until a reply, a dead letter, the
   * signal, or shutdown.
   * @default undefined
   */
  timeoutMs?: number | undefined;
  /**
   * Cancels the request: the promise rejects with AbortError; a reply arriving later goes to
   * dead letters.
   * @default undefined
   */
  signal?: AbortSignal | undefined;
  /**
   * String headers for the target's `ctx.headers`.
   * @default undefined
   */
  header?: Record<string, string> | undefined;
}

/**
 * Takes a request's outcome instead of a promise (see `RootContext.requestTo`): a runtime built
 * on core that maps or retries replies (the grain caller) settles its own promise from here,
 * without a second promise and two closures per request.
 */
export interface ReplySink {
  /**
   * Called once: the reply and no error, or no reply (undefined) and the error the request's
   * promise would reject with (a reply that is an Error, timeout, abort, a dead letter, ...).
   */
  settle(reply: unknown, error: Error | undefined): void;
}

/** Placeholders of a sink future's resolving functions (`dead` is derived from them). */
const settleReply = (): void => {};
const settleError = (): void => {};

/** What only requests with a signal or watchers need (allocated on demand). */
class FutureExtras {
  signal: AbortSignal | undefined = undefined;
  onAbort: (() => void) | undefined = undefined;
  watchers: PID[] | undefined = undefined;
}

/**
 * The temporary process a request's reply goes to (`f$<slot><token>` in the registry). The first
 * reply settles the promise (an Error reply rejects it); the process is then removed, so a
 * later reply is a dead letter (reason `late-reply`).
 *
 * It is also the request's envelope (message, sender = its own PID, header): one object less
 * per request, which is most of what a request costs besides its promise.
 */
export class FutureProcess<T = unknown>
  extends Envelope
  implements LocalProcess, SequencedProcess, TimerTarget, Settlers<T>
{
  readonly seq: number;
  /** Undefined when a ReplySink takes the outcome. */
  readonly promise: Promise<T> | undefined;
  /**
   * Cleared when settled: `dead` is derived from it (fewer fields per request). Written by
   * promiseSettledBy, or placeholders when a sink takes the outcome. @internal
   */
  resolve: ((value: T) => void) | undefined = undefined;
  /** @internal */
  reject: ((error: Error) => void) | undefined = undefined;
  private extras: FutureExtras | undefined = undefined;
  private sink: ReplySink | undefined = undefined;
  /** The request's timeout: the future is its own timer callback (no closure per request). */
  private timer: TimerHandle | undefined = undefined;
  private timeoutMs = 0;

  constructor(
    private readonly runtime: Runtime,
    /** The request's target, for error messages. */
    readonly target: PID,
    message: unknown,
    options: RequestOptions | undefined,
    sink?: ReplySink,
  ) {
    super(message, undefined, options?.header);
    if (sink === undefined) this.promise = promiseSettledBy<T>(this);
    else {
      this.promise = undefined;
      this.sink = sink;
      this.resolve = settleReply as (value: T) => void;
      this.reject = settleError;
    }
    const registry = runtime.registry;
    this.seq = registry.nextFutureSeq();
    registry.addFuture(this);
    if (options !== undefined) this.applyOptions(target, options);
  }

  /**
   * This future's PID, made on first read: a reply through `ctx.respond` completes the future
   * directly, so a local round trip never builds the `f$<slot><token>` string (~10% of its cost).
   */
  override get sender(): PID {
    return (this.from ??= this.runtime.registry.futurePid(this));
  }

  /** Timeout and signal: only requests that ask for them pay for their closures. */
  private applyOptions(target: PID, options: RequestOptions): void {
    if (options.timeoutMs !== undefined) {
      const ms = options.timeoutMs;
      // typeof first: from JavaScript (a timeout read from the environment) '100' >= 0 holds,
      // and now + '100' would make the deadline a string, so the request never timed out.
      if (typeof ms !== 'number' || !(ms >= 0)) {
        this.fail(
          new InvalidArgumentError('options.timeoutMs', `${shown(ms)} is not a number of ms >= 0`),
        );
        return;
      }
      // The deadline travels with the request (ctx.deadline at the target, also remotely).
      this.due = this.runtime.clock.now() + ms;
      this.timeoutMs = ms;
      this.timer = this.runtime.timers.schedule(ms, this);
    }
    const signal = options.signal;
    if (signal !== undefined) {
      // Checked before anything is registered: a plain object threw a TypeError from
      // addEventListener and left this future in the registry until shutdown.
      if (typeof (signal as Partial<AbortSignal>).addEventListener !== 'function') {
        this.fail(
          new InvalidArgumentError(
            'options.signal',
            `must be an AbortSignal, got ${shown(signal)}`,
          ),
        );
        return;
      }
      if (signal.aborted) {
        this.fail(new AbortError(target.toString(), signal.reason));
        return;
      }
      const x = (this.extras ??= new FutureExtras());
      x.signal = signal;
      x.onAbort = () => this.fail(new AbortError(target.toString(), signal.reason));
      signal.addEventListener('abort', x.onAbort, { once: true });
    }
  }

  /** Settled (replied, failed, timed out or aborted) and unregistered. */
  get dead(): boolean {
    return this.resolve === undefined;
  }

  /** This future's PID (also the request envelope's sender). */
  get pid(): PID {
    return this.sender;
  }

  /** The id of its PID if that was made (see SequencedProcess). */
  get issuedId(): string | undefined {
    return this.from?.id;
  }

  get owner(): ProcessRegistry {
    return this.runtime.registry;
  }

  get capacity(): number {
    return Infinity;
  }

  /** A reply: settles the request (never refused). */
  post(_pid: PID, entry: Entry): boolean {
    this.complete(entryMessage(entry));
    return true;
  }

  sendSystemMessage(_pid: PID, message: unknown): void {
    if (!(message instanceof Watch)) return;
    if (this.dead) this.tellTerminated(message.watcher);
    else ((this.extras ??= new FutureExtras()).watchers ??= []).push(message.watcher);
  }

  stop(): void {
    this.fail(new AbortError(this.target.toString(), 'stopped'));
  }

  /**
   * A sink runs inside whatever completed the request (a responder's turn, a received batch,
   * the timer wheel): an exception it throws is logged, not thrown into that code.
   */
  private settleSink(sink: ReplySink, reply: unknown, error: Error | undefined): void {
    try {
      sink.settle(reply, error);
    } catch (err) {
      this.runtime.logger.error({ err, target: this.target.toString() }, 'reply sink threw');
    }
  }

  /** @internal the timeout elapsed. */
  onTimer(): void {
    this.fail(TimeoutError.of(this.target.toString(), this.timeoutMs));
  }

  /** Settles with a reply; an Error instance rejects. */
  complete(message: unknown): void {
    if (this.dead) {
      this.runtime.deadLetters.publish(this.pid, message, undefined, 'late-reply');
      return;
    }
    const resolve = this.resolve!;
    const reject = this.reject!;
    this.finish();
    const sink = this.sink;
    if (sink === undefined) {
      if (message instanceof Error) reject(message);
      else resolve(message as T);
    } else if (message instanceof Error) this.settleSink(sink, undefined, message);
    else this.settleSink(sink, message, undefined);
  }

  /** Rejects (timeout, abort, dead target, full mailbox); later replies are dead letters. */
  fail(error: Error): void {
    const reject = this.reject;
    if (reject === undefined) return;
    this.finish();
    const sink = this.sink;
    if (sink !== undefined) this.settleSink(sink, undefined, error);
    else reject(error);
  }

  private finish(): void {
    this.resolve = this.reject = undefined;
    this.runtime.registry.removeFuture(this);
    this.timer?.cancel();
    const x = this.extras;
    if (x === undefined) return;
    if (x.signal !== undefined) x.signal.removeEventListener('abort', x.onAbort!);
    for (const w of x.watchers ?? []) this.tellTerminated(w);
  }

  private tellTerminated(watcher: PID): void {
    const t = new Terminated(this.pid, 'stopped');
    this.runtime.registry.get(watcher).sendSystemMessage(watcher, t);
  }
}

/** A bad option's value for its error message: a string quoted, an object by its kind. */
function shown(value: unknown): string {
  if (typeof value === 'string') return `'${value}' (a string)`;
  if (typeof value === 'object' && value !== null)
    return `an object (${value.constructor?.name ?? 'no prototype'})`;
  return String(value);
}

import { FUTURE_PREFIX } from './dead-letters';
import { AbortError, TimeoutError } from './errors';
import { messageOf } from './internal/envelope';
import { Terminated, Watch } from './messages';
import type { Runtime } from './internal/runtime';
import type { PID } from './pid';
import type { LocalProcess, MessageEnvelope } from './process';
import type { ProcessRegistry } from './process-registry';
import type { TimerHandle } from './timer-wheel';

/** Options of a request. */
export interface RequestOptions {
  /**
   * Reject with TimeoutError if no reply arrives within this many ms (on the shared timer
   * wheel, never a setTimeout per request). Omitted: wait until a reply, a dead letter, or
   * the signal.
   * @default undefined
   */
  timeoutMs?: number;
  /**
   * Cancels the request: the promise rejects with AbortError; a reply arriving later goes to
   * dead letters.
   * @default undefined
   */
  signal?: AbortSignal;
  /**
   * String headers for the target's `ctx.headers`.
   * @default undefined
   */
  header?: Record<string, string>;
}

/**
 * The temporary process a request's reply goes to (`future$<n>` in the registry). The first
 * reply settles the promise (an Error reply rejects it); the process is then removed, so a
 * later reply is a dead letter.
 */
export class FutureProcess<T = unknown> implements LocalProcess {
  dead = false;
  readonly pid: PID;
  readonly promise: Promise<T>;
  private resolve!: (value: T) => void;
  private reject!: (error: Error) => void;
  private timer: TimerHandle | undefined = undefined;
  private signal: AbortSignal | undefined = undefined;
  private watchers: PID[] | undefined = undefined;
  /** Created only for requests with a signal: a plain request allocates no closure here. */
  private onAbort: (() => void) | undefined = undefined;

  constructor(
    private readonly runtime: Runtime,
    /** The request's target, for error messages. */
    readonly target: PID,
    options: RequestOptions | undefined,
  ) {
    this.promise = new Promise<T>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    const registry = runtime.registry;
    this.pid = registry.add(registry.nextId(FUTURE_PREFIX), this);
    if (options === undefined) return;
    if (options.timeoutMs !== undefined) {
      const ms = options.timeoutMs;
      this.timer = runtime.timers.schedule(ms, () =>
        this.fail(new TimeoutError(target.toString(), ms)),
      );
    }
    if (options.signal !== undefined) {
      const signal = options.signal;
      if (signal.aborted) {
        this.fail(new AbortError(target.toString(), signal.reason));
        return;
      }
      this.signal = signal;
      this.onAbort = () => this.fail(new AbortError(target.toString(), signal.reason));
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
  }

  get owner(): ProcessRegistry {
    return this.runtime.registry;
  }

  readonly capacity = Infinity;

  post(entry: unknown): boolean {
    this.complete(messageOf(entry));
    return true;
  }

  sendUserMessage(_pid: PID, envelope: MessageEnvelope): void {
    this.complete(envelope.message);
  }

  sendSystemMessage(_pid: PID, message: unknown): void {
    if (message instanceof Watch) (this.watchers ??= []).push(message.watcher);
  }

  stop(): void {
    this.fail(new AbortError(this.target.toString(), 'stopped'));
  }

  /** Settles with a reply; an Error instance rejects. */
  complete(message: unknown): void {
    if (this.dead) {
      this.runtime.deadLetters.publish(this.pid, message, undefined, 'late-reply');
      return;
    }
    this.finish();
    if (message instanceof Error) this.reject(message);
    else this.resolve(message as T);
  }

  /** Rejects (timeout, abort, dead target, full mailbox); later replies are dead letters. */
  fail(error: Error): void {
    if (this.dead) return;
    this.finish();
    this.reject(error);
  }

  private finish(): void {
    this.dead = true;
    this.runtime.registry.remove(this.pid);
    if (this.timer !== undefined) this.timer.cancel();
    if (this.signal !== undefined) this.signal.removeEventListener('abort', this.onAbort!);
    if (this.watchers !== undefined) {
      for (const w of this.watchers) {
        this.runtime.registry.get(w).sendSystemMessage(w, new Terminated(this.pid, 'stopped'));
      }
    }
  }
}

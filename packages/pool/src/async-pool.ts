import { InvalidArgumentError, InvalidOptionError } from '@granary/core';
import { rejectUnknownOptions } from '@granary/core/internal';
import {
  PoolAbortError,
  PoolClosedError,
  PoolDisposeError,
  PoolElementError,
  PoolFactoryError,
  PoolTimeoutError,
} from './errors';
import { LinkedQueue, type QueueNode } from './internal/linked-queue';

/** Options of {@link AsyncPool}. */
export interface AsyncPoolOptions<T> {
  /**
   * Builds one element (a connection, a client). Called lazily, only when no element is free
   * and fewer than `max` exist. A throw or rejection fails one waiting `get` with
   * `PoolFactoryError` and frees the slot.
   */
  create: () => T | Promise<T>;
  /**
   * Closes one element: on `destroy`, on `close()` for free elements, and on `release` after
   * `close()` for elements that were leased at the time.
   * @default no-op
   */
  close?: (element: T) => void | Promise<void>;
  /**
   * Most elements that exist at once (free, leased and being built).
   * @default 10
   */
  max?: number;
  /**
   * Default deadline of `get` in milliseconds; `Infinity` waits forever.
   * @default Infinity
   */
  acquireTimeoutMs?: number;
  /**
   * Told about failures no caller awaits: closing an element after `close()`, or in
   * `use(fn)` with `destroyOnError`. Every such failure is also counted in `stats().errors`.
   * @default no-op
   */
  onError?: (err: PoolDisposeError) => void;
  /**
   * In `use(fn)`, destroy the element instead of releasing it when `fn` throws (the element
   * may be broken, e.g. a connection in an unknown protocol state).
   * @default false
   */
  destroyOnError?: boolean;
}

/** Default values of the optional {@link AsyncPoolOptions} fields. */
export const DEFAULT_ASYNC_POOL_OPTIONS = {
  close: (): void => {},
  onError: (): void => {},
  max: 10,
  acquireTimeoutMs: Infinity,
  destroyOnError: false,
} as const;

/** Every option AsyncPool knows (the compiler keeps it in step with AsyncPoolOptions). */
const ASYNC_POOL_OPTION_KEYS = {
  create: true,
  close: true,
  max: true,
  acquireTimeoutMs: true,
  onError: true,
  destroyOnError: true,
} as const satisfies Record<keyof AsyncPoolOptions<unknown>, true>;

/** Options of one {@link AsyncPool.get} call. */
export interface GetOptions {
  /**
   * Deadline in milliseconds; rejects with `PoolTimeoutError` when it passes.
   * @default the pool's `acquireTimeoutMs`
   */
  timeoutMs?: number;
  /**
   * Stops waiting when aborted: rejects with `PoolAbortError` (`name` `AbortError`).
   * @default none
   */
  signal?: AbortSignal;
}

/** Counters of an {@link AsyncPool}, for monitoring. */
export interface AsyncPoolStats {
  /** Elements that exist (free + leased). */
  size: number;
  /** Elements ready to be handed out. */
  free: number;
  /** Elements handed out and not yet released or destroyed. */
  leased: number;
  /** Elements whose factory call has not settled. */
  building: number;
  /** Callers waiting in `get`. */
  waiting: number;
  /** Element close failures that no caller awaited (see `onError`). */
  errors: number;
}

interface Waiter<T> {
  resolve(element: T): void;
  reject(err: Error): void;
  /** Detaches the timer and abort listener; called exactly once when the waiter settles. */
  cleanup(): void;
}

/**
 * An async-aware element pool (after Jack Morris' Swift actor pool design, "Distributing Work
 * Between Actors"): a free element is returned at once
 * (free-first); otherwise one is built lazily while fewer than `max` exist; otherwise the caller
 * waits, and waiters are served first-in first-out. Elements that failed are `destroy`ed and
 * replaced on demand.
 *
 * @example
 * const pool = new AsyncPool({ create: () => connect(url), close: (c) => c.end(), max: 4 });
 * const rows = await pool.use((conn) => conn.query('select 1'), { timeoutMs: 1000 });
 * await pool.close();
 */
export class AsyncPool<T> {
  private readonly options: Required<AsyncPoolOptions<T>>;
  /** Free elements; the most recently released is reused first so idle ones stay idle. */
  private readonly free: T[] = [];
  private readonly leased = new Set<T>();
  private readonly waiters = new LinkedQueue<Waiter<T>>();
  private building = 0;
  /** Factory calls in flight, each settling once its element is delivered or closed. */
  private readonly builds = new Set<Promise<void>>();
  private errors = 0;
  private closing: Promise<void> | undefined;

  constructor(options: AsyncPoolOptions<T>) {
    this.options = { ...DEFAULT_ASYNC_POOL_OPTIONS, ...options };
    const { max, acquireTimeoutMs, create } = this.options;
    if (typeof create !== 'function') {
      throw new InvalidOptionError('create', 'AsyncPool needs a function');
    }
    // { destroyOnErr: true } kept handing out the element whose callback threw.
    rejectUnknownOptions('AsyncPool', options, ASYNC_POOL_OPTION_KEYS);
    if (!Number.isInteger(max) || max < 1) {
      throw new InvalidOptionError('max', `must be an integer >= 1, got ${max}`);
    }
    if (!(acquireTimeoutMs >= 0)) {
      throw new InvalidOptionError('acquireTimeoutMs', `must be >= 0, got ${acquireTimeoutMs}`);
    }
  }

  /** True once `close()` was called. */
  get closed(): boolean {
    return this.closing !== undefined;
  }

  /** Current counters. */
  stats(): AsyncPoolStats {
    return {
      size: this.free.length + this.leased.size,
      free: this.free.length,
      leased: this.leased.size,
      building: this.building,
      waiting: this.waiters.length,
      errors: this.errors,
    };
  }

  /**
   * Leases an element: a free one at once, else a newly built one while fewer than `max`
   * exist, else the first one released after every earlier waiter was served.
   */
  get(options: GetOptions = {}): Promise<T> {
    if (this.closing) return Promise.reject(new PoolClosedError('AsyncPool'));
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(new PoolAbortError(signal.reason));
    const timeoutMs = options.timeoutMs ?? this.options.acquireTimeoutMs;
    if (!(timeoutMs >= 0)) {
      return Promise.reject(
        new InvalidArgumentError('options.timeoutMs', `must be >= 0, got ${timeoutMs}`),
      );
    }
    if (this.free.length > 0) {
      const element = this.free.pop() as T;
      this.leased.add(element);
      return Promise.resolve(element);
    }
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = (): void => leave(new PoolAbortError(signal?.reason));
      const waiter: Waiter<T> = {
        resolve,
        reject,
        cleanup: () => {
          if (timer) clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        },
      };
      const node: QueueNode<Waiter<T>> = this.waiters.push(waiter);
      const leave = (err: Error): void => {
        this.waiters.remove(node);
        waiter.cleanup();
        reject(err);
      };
      if (timeoutMs !== Infinity)
        timer = setTimeout(() => leave(new PoolTimeoutError(timeoutMs)), timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.grow();
    });
  }

  /**
   * Gives a leased element back: to the longest waiting caller if any, else to the free list.
   * After `close()` the element is closed instead.
   * @throws PoolElementError if `element` is not leased from this pool.
   */
  release(element: T): void {
    if (!this.leased.delete(element)) throw new PoolElementError('release');
    if (this.closing) {
      this.disposeInBackground(element);
      return;
    }
    this.deliver(element);
  }

  /**
   * Removes a leased element that failed and closes it. Its slot is free again, so a
   * replacement is built the next time a caller needs one (at once if callers are waiting).
   * Resolves when the element is closed; rejects with `PoolDisposeError` if closing it failed.
   * @throws PoolElementError if `element` is not leased from this pool.
   */
  destroy(element: T): Promise<void> {
    if (!this.leased.delete(element)) return Promise.reject(new PoolElementError('destroy'));
    this.grow();
    return this.dispose([element]);
  }

  /**
   * Runs `fn` with a leased element and always gives the element back, also when `fn` throws
   * (released, or destroyed with `destroyOnError`). Resolves or rejects as `fn` does.
   */
  async use<R>(fn: (element: T) => R | Promise<R>, options?: GetOptions): Promise<R> {
    const element = await this.get(options);
    let result: R;
    try {
      result = await fn(element);
    } catch (err) {
      this.giveBack(element, this.options.destroyOnError);
      throw err;
    }
    this.giveBack(element, false);
    return result;
  }

  /**
   * Closes the pool: every waiting and later `get` rejects with `PoolClosedError`, free
   * elements and those still being built are closed (the promise waits for both), leased
   * ones when they are released or destroyed. Idempotent.
   * Rejects with `PoolDisposeError` if closing some free element failed.
   */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    for (const waiter of this.waiters.drain()) {
      waiter.cleanup();
      waiter.reject(new PoolClosedError('AsyncPool'));
    }
    // Elements still being built are closed as they arrive; close() waits for them too.
    const free = this.dispose(this.free.splice(0));
    this.closing = Promise.all([free, ...this.builds]).then(() => undefined);
    return this.closing;
  }

  /** Starts builds while callers wait that no build in flight will serve, up to `max`. */
  private grow(): void {
    while (
      !this.closing &&
      this.waiters.length > this.building &&
      this.free.length + this.leased.size + this.building < this.options.max
    ) {
      this.building++;
      let built: Promise<T>;
      try {
        built = Promise.resolve(this.options.create());
      } catch (err) {
        built = Promise.reject(err);
      }
      const settled = built.then(
        (element) => {
          this.building--;
          if (this.closing) return this.disposeQuietly(element);
          this.deliver(element);
        },
        (err: unknown) => {
          this.building--;
          const waiter = this.waiters.shift();
          if (waiter) {
            waiter.cleanup();
            waiter.reject(new PoolFactoryError(err));
          }
          this.grow();
        },
      );
      this.builds.add(settled);
      void settled.finally(() => this.builds.delete(settled));
    }
  }

  /** Hands an element that is not leased to the head waiter, or keeps it free. */
  private deliver(element: T): void {
    const waiter = this.waiters.shift();
    if (!waiter) {
      this.free.push(element);
      return;
    }
    waiter.cleanup();
    this.leased.add(element);
    waiter.resolve(element);
  }

  /** `use` gives the element back unless `fn` already released or destroyed it itself. */
  private giveBack(element: T, destroy: boolean): void {
    if (!this.leased.has(element)) return;
    if (destroy) void this.destroy(element).catch((err: PoolDisposeError) => this.report(err));
    else this.release(element);
  }

  private disposeInBackground(element: T): void {
    void this.disposeQuietly(element);
  }

  /** Closes one element; a failure is reported (`onError`, `stats().errors`), never thrown. */
  private disposeQuietly(element: T): Promise<void> {
    return this.dispose([element]).catch((err: PoolDisposeError) => this.report(err));
  }

  private report(err: PoolDisposeError): void {
    this.errors++;
    this.options.onError(err);
  }

  private async dispose(elements: T[]): Promise<void> {
    const results = await Promise.allSettled(
      elements.map(async (element) => this.options.close(element)),
    );
    const errors = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    if (errors.length > 0) throw new PoolDisposeError(errors);
  }
}

import type { Actor, Context, PID, Props, TerminatedReason } from '@granary/core';
import type { PoolStrategy, PoolStrategyName } from './pool-strategy';

/**
 * Makes one worker from the pool's `workerArgs`. Declared as a method so a factory typed
 * for its arguments (`(cfg: Config) => new Worker(cfg)`) fits `PoolOptions` (method
 * parameters are bivariant in TypeScript).
 */
export type WorkerFactory<W = unknown> = {
  make(args: W): Actor;
}['make'];

/** What `PoolBehavior.init` returns: the workers and how messages are spread over them. */
export interface PoolOptions<W = unknown> {
  /**
   * Workers spawned when the pool starts.
   * @default 3
   */
  poolSize?: number;
  /**
   * How to make a worker: `Props` (its own options are kept, the mailbox bound is replaced
   * by `workerMailboxSize`) or a factory called with `workerArgs` for every worker, also for
   * replacements of dead ones.
   */
  workerProps: Props | WorkerFactory<W>;
  /**
   * Bound of each worker's user lane. A full worker is skipped; when all are full the pool
   * is saturated. The pool buffers nothing itself, so `poolSize × workerMailboxSize` is the
   * most work the pool holds: a rate limit whose excess reaches the senders as
   * `PoolSaturatedError`.
   * @default Infinity
   */
  workerMailboxSize?: number;
  /**
   * Passed to the `workerProps` factory for every worker.
   * @default undefined
   */
  workerArgs?: W;
  /**
   * How a worker is picked: `'round-robin'` (ergo's act.Pool FIFO), `'least-busy'`, `'random'`,
   * `'broadcast'`, or a strategy object such as `consistentHash(keyOf)`.
   * @default 'round-robin'
   */
  strategy?: PoolStrategyName | PoolStrategy;
}

/** Defaults of the optional {@link PoolOptions} fields. */
export const DEFAULT_POOL_OPTIONS = {
  poolSize: 3,
  workerMailboxSize: Infinity,
  workerArgs: undefined,
  strategy: 'round-robin',
} as const;

/** What `inspect()` and `inspectPool()` report (ergo's act.Pool names, plus two). */
export interface PoolInspection {
  /** Workers in the pool now. */
  pool_size: number;
  /** Class name of the worker actor (`Object` for plain objects). */
  worker_behavior: string;
  /** Bound of each worker's mailbox (`Infinity`: unbounded). */
  worker_mailbox_size: number;
  /** Workers replaced after they died. */
  worker_restarts: number;
  /** Messages handed to a worker (each copy counts under broadcast). */
  messages_forwarded: number;
  /** Messages no worker took (saturation): dead-lettered, or rejected for requests. */
  messages_unhandled: number;
  /** Name of the strategy. */
  strategy: string;
  /** `init`, `running`, `restarting`, `draining`, `stopping` or `stopped`. */
  state: string;
  /** Extra items from `handleInspect`. */
  [item: string]: string | number;
}

/**
 * What a pool callback gets: the pool's own operations and, as `core`, the core Context of
 * the pool actor for the current message (`core.sender`, `core.respond`, `core.spawn`, ...).
 */
export interface PoolContext {
  /** The pool's PID (what senders use). */
  readonly self: PID;
  /** The core context of the pool actor, valid during the callback. */
  readonly core: Context;
  /** Current workers, in slot order. */
  readonly workers: readonly PID[];
  /**
   * Spawns `n` more workers with the same factory and arguments; they take work at once.
   * @returns the new pool size
   * @throws PoolStateError outside the running state; InvalidArgumentError if `n` is not >= 1
   */
  addWorkers(n: number): number;
  /**
   * Takes `n` workers out of rotation; each finishes the messages already in its mailbox,
   * then stops (a PoisonPill). At least one worker stays.
   * @returns the new pool size
   * @throws PoolStateError outside the running state; InvalidArgumentError if `n` is not in 1..size-1
   */
  removeWorkers(n: number): number;
  /** The pool's statistics, with `handleInspect`'s items. */
  inspect(): PoolInspection;
}

/**
 * A pool: `init` says which workers to run; everything else is optional. Messages and
 * requests on the user lane go to the workers (with the original sender, so a worker's reply
 * goes straight to the caller); urgent ones come to `handleMessage` / `handleCall`.
 *
 * @example
 * class Resizers implements PoolBehavior<number> {
 *   init(size: number): PoolOptions {
 *     return { poolSize: size, workerProps: () => new Resizer(), workerMailboxSize: 20 };
 *   }
 *   handleMessage(pool: PoolContext, msg: unknown): void {
 *     if (msg instanceof ScaleUp) pool.addWorkers(msg.count);
 *   }
 * }
 * const pid = spawnPool(system.root, () => new Resizers(), 8);
 */
export interface PoolBehavior<A = unknown> {
  /** Returns the options; a throw stops `spawnPool` with that error. Synchronous. */
  init(args: A): PoolOptions;
  /** An urgent plain message (never forwarded). Default: dead-lettered as `pool-unhandled`. */
  handleMessage?(pool: PoolContext, message: unknown): void | Promise<void>;
  /**
   * An urgent request; what it returns is the reply (an Error rejects the caller). Returning
   * `undefined` rejects the caller with PoolUnhandledRequestError at once.
   */
  handleCall?(pool: PoolContext, request: unknown): unknown;
  /** Extra items for `inspect()`. */
  handleInspect?(pool: PoolContext): Record<string, string | number>;
  /** The pool stopped (its workers are gone). */
  terminate?(reason: TerminatedReason): void | Promise<void>;
}

import {
  InvalidOptionError,
  OneForOneStrategy,
  type PID,
  Props,
  type SenderContext,
  type SpawnerContext,
} from '@granary/core';
import { PoolActor } from './internal/pool-actor';
import { PoolRouter } from './internal/pool-router';
import { WorkerFactory } from './internal/worker-factory';
import { DEFAULT_POOL_OPTIONS, type PoolBehavior, type PoolOptions } from './pool-behavior';
import { resolveStrategy } from './pool-strategy';

/** Options of {@link spawnPool}. */
export interface SpawnPoolOptions {
  /**
   * Registry id of the pool's PID; a taken one throws NameExistsError.
   * @default a generated `pool$<n>`
   */
  name?: string;
}

/**
 * A worker that fails is stopped, not restarted in place: the pool sees it terminate and
 * spawns a replacement from the same factory (ergo's act.Pool restart, counted as worker_restarts).
 */
const WORKER_SUPERVISOR = new OneForOneStrategy({ decider: () => 'stop' });

/**
 * Starts a pool (as a child of `parent` when it is an actor's context) and returns its PID.
 * `init(args)` runs now, so bad options throw here; the workers start with the pool actor.
 * Send work to the PID as to any actor: user-lane messages and requests go to a worker with
 * their original sender; urgent ones (`send(..., { priority: 'urgent' })`, `requestUrgent`)
 * go to the behavior's `handleMessage` / `handleCall`. `stop(pid)` stops the pool and its
 * workers at once; `poison(pid)` lets every worker finish its queue first.
 *
 * @example
 * const pool = spawnPool(system.root, () => ({
 *   init: () => ({ poolSize: 8, workerProps: () => new Hasher(), workerMailboxSize: 100 }),
 * }));
 * const digest = await system.root.request(pool, { data }, { timeoutMs: 1000 });
 */
export function spawnPool<A = undefined>(
  parent: SpawnerContext & SenderContext,
  behavior: () => PoolBehavior<A>,
  args?: A,
  options: SpawnPoolOptions = {},
): PID {
  const instance = behavior();
  const init: unknown = instance.init(args as A);
  if (typeof (init as PromiseLike<unknown> | undefined)?.then === 'function') {
    throw new InvalidOptionError('init', 'must return the pool options synchronously');
  }
  const opts = { ...DEFAULT_POOL_OPTIONS, ...(init as PoolOptions) };
  validate(opts);
  const strategy = resolveStrategy(opts.strategy);
  const factory = new WorkerFactory(
    opts.workerProps as Props | ((args: unknown) => never),
    opts.workerArgs,
    opts.workerMailboxSize,
    strategy.usesLoad === true,
  );
  const router = new PoolRouter(
    parent.system,
    instance as PoolBehavior<never>,
    strategy,
    factory,
    opts.poolSize,
    options.name,
  );
  try {
    router.actor = parent.spawn(
      Props.fromProducer(() => new PoolActor(router), { supervisor: WORKER_SUPERVISOR }),
    );
  } catch (err) {
    parent.system.registry.remove(router.self);
    throw err;
  }
  return router.self;
}

function validate(opts: Required<Omit<PoolOptions, 'workerArgs'>>): void {
  const { poolSize, workerMailboxSize, workerProps } = opts;
  if (!Number.isInteger(poolSize) || poolSize < 1) {
    throw new InvalidOptionError('poolSize', `must be an integer >= 1, got ${poolSize}`);
  }
  if (!(
    workerMailboxSize === Infinity ||
    (Number.isInteger(workerMailboxSize) && workerMailboxSize >= 1)
  )) {
    throw new InvalidOptionError(
      'workerMailboxSize',
      `must be an integer >= 1 or Infinity, got ${workerMailboxSize}`,
    );
  }
  if (!(workerProps instanceof Props) && typeof workerProps !== 'function') {
    throw new InvalidOptionError('workerProps', 'must be Props or a factory function');
  }
}

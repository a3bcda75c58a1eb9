import type { Logger } from '@granary/core';
import type { Grain, GrainContext } from '../grains/grain';
import { ThreadPool } from './thread-pool';
import { resolveThreadedOptions, type ThreadedOptions } from './threaded-options';

/** A member's pool for one threaded() spec, and the activations using it. */
interface Lease {
  readonly pool: ThreadPool;
  users: number;
}

/**
 * Pools by member (the cluster handle a grain sees) and spec: a process running several members
 * (tests) gives each its own `threads`, as separate processes would have.
 */
const pools = new WeakMap<object, Map<ThreadedSpec, Lease>>();

/** One threaded() call: its resolved options (the map key of its pools). */
class ThreadedSpec {
  constructor(readonly options: ReturnType<typeof resolveThreadedOptions>) {}

  acquire(member: object, logger: Logger): ThreadPool {
    let bySpec = pools.get(member);
    if (bySpec === undefined) pools.set(member, (bySpec = new Map()));
    let lease = bySpec.get(this);
    if (lease === undefined)
      bySpec.set(this, (lease = { pool: new ThreadPool(this.options, logger), users: 0 }));
    lease.users++;
    return lease.pool;
  }

  /** The last activation of the spec on the member ended: its threads end too. */
  release(member: object, pool: ThreadPool): Promise<void> | undefined {
    const bySpec = pools.get(member);
    const lease = bySpec?.get(this);
    if (lease === undefined || lease.pool !== pool || --lease.users > 0) return undefined;
    bySpec!.delete(this);
    return pool.close();
  }
}

/**
 * The grain a threaded() factory makes: each turn hands the message to one of its member's
 * worker threads and replies with what the handler returned there. The turn awaits the thread,
 * so the activation keeps its one-turn-at-a-time order while the member's event loop stays free.
 */
class ThreadedGrain implements Grain {
  private pool: ThreadPool | undefined;
  private member: object | undefined;

  constructor(private readonly spec: ThreadedSpec) {}

  onActivate(ctx: GrainContext): void {
    this.member = ctx.cluster;
    this.pool = this.spec.acquire(ctx.cluster, ctx.core.system.logger);
  }

  onDeactivate(): Promise<void> | undefined {
    const pool = this.pool;
    this.pool = undefined;
    return pool === undefined ? undefined : this.spec.release(this.member!, pool);
  }

  receive(ctx: GrainContext): Promise<unknown> {
    const deadline = ctx.deadline;
    return this.pool!.run(ctx.message, {
      kind: ctx.kind,
      identity: ctx.identity,
      activationId: ctx.activationId,
      deadline,
      signal: Number.isFinite(deadline) ? ctx.signal : undefined,
    });
  }
}

/**
 * A grain factory whose grains run their handler in worker threads: for CPU-bound kinds, whose
 * turns would otherwise hold the member's event loop (every other grain, the remote, the
 * membership keep-alives wait behind a synchronous turn). Callers see no difference: same
 * `cluster.request`, same replies, a thrown error reaches them as the same GrainError.
 *
 * Each member runs at most `threads` threads for the factory; its activations queue for them in
 * order. The message and the reply cross by structured clone (plain data, typed arrays, Maps;
 * no functions or class prototypes); the handler's errors cross as name, code, message and stack;
 * the call's deadline crosses as `ctx.deadline` and `ctx.signal`, and a task still queued or
 * running at the deadline is dropped, its thread terminated (ThreadTaskAbortedError).
 *
 * @example
 * // hash-task.js: export function handler(message, ctx) { return pbkdf2Sync(...) }
 * const hashes = kind('hash', threaded({ module: require.resolve('./hash-task'), threads: 2 }));
 * const pool = poolKind('resize', threaded({ module: require.resolve('./resize-task') }), { size: 8 });
 */
export function threaded(options: ThreadedOptions): () => Grain {
  const spec = new ThreadedSpec(resolveThreadedOptions(options));
  return () => new ThreadedGrain(spec);
}

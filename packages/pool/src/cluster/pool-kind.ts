import { InvalidArgumentError, InvalidOptionError } from '@granary/core';
import { rejectUnknownOptions } from '@granary/core/internal';
import {
  kind,
  type DeactivationReason,
  type Grain,
  type GrainContext,
  type KindDefinition,
} from '@granary/cluster';
import {
  INVENTORY_ID,
  isControl,
  memberKind,
  type Inventory,
  type PoolControl,
  type WorkerStats,
} from './internal/pool-protocol';

/** Options of {@link poolKind}. */
export interface PoolKindOptions {
  /**
   * Workers in the whole cluster (`name#0` … `name#size-1`); `PoolClient.resize` changes it.
   * @default 10
   */
  size?: number;
  /**
   * Most workers one member runs (a cap below ⌈size / members⌉ leaves workers unplaced).
   * @default Infinity
   */
  maxPerNode?: number;
  /**
   * Calls one caller keeps outstanding per worker; when every worker is at it, the caller's
   * next call fails at once with PoolSaturatedError.
   * @default 4
   */
  maxInFlight?: number;
  /**
   * Mailbox bound of each worker activation.
   * @default Infinity
   */
  workerMailboxSize?: number;
}

/** Defaults of {@link PoolKindOptions}. */
export const DEFAULT_POOL_KIND_OPTIONS = {
  size: 10,
  maxPerNode: Infinity,
  maxInFlight: 4,
  workerMailboxSize: Infinity,
} as const;

/** Every option poolKind() knows (the compiler keeps it in step with PoolKindOptions). */
const POOL_KIND_OPTION_KEYS = {
  size: true,
  maxPerNode: true,
  maxInFlight: true,
  workerMailboxSize: true,
} as const satisfies Record<keyof PoolKindOptions, true>;

/** A cluster pool: a kind whose workers are grains spread evenly over the members hosting it. */
export interface PoolKind {
  readonly name: string;
  /**
   * The grain kind member `memberId` hosts for this pool: pass it in
   * `Cluster.start({ id: memberId, kinds: [...] })` (the same id). Only that member hosts it,
   * which is how a PoolClient places worker `i` on a chosen member.
   */
  on(memberId: string): KindDefinition;
}

/** One member's share of a pool: its settings and the workers active on it. */
interface MemberPool {
  size: number;
  sizeAt: number;
  readonly maxPerNode: number;
  readonly maxInFlight: number;
  readonly active: Map<number, string>;
}

/**
 * Defines a cluster pool of `factory` workers (DESIGN.md: "pools act as kinds whose workers spread
 * across nodes"). Callers use `PoolClient.get(cluster, name)`, which places the workers and
 * sends each call to the worker with the fewest calls outstanding.
 *
 * @example
 * const resize = poolKind('resize', () => new Resizer(), { size: 12 });
 * const cluster = await Cluster.start({ id: 'n1', kinds: [resize.on('n1')], name, provider, remote });
 * const small = await PoolClient.get(cluster, 'resize').request({ image }, { timeoutMs: 2000 });
 */
export function poolKind(
  name: string,
  factory: () => Grain,
  options: PoolKindOptions = {},
): PoolKind {
  // From JavaScript or a config object, { maxInflight: 1 } kept the default of 4 calls a worker.
  rejectUnknownOptions(`poolKind('${name}')`, options, POOL_KIND_OPTION_KEYS);
  const o = { ...DEFAULT_POOL_KIND_OPTIONS, ...options };
  if (!Number.isInteger(o.size) || o.size < 0) {
    throw new InvalidOptionError('size', `must be an integer >= 0, got ${o.size}`);
  }
  if (!(o.maxPerNode >= 1)) {
    throw new InvalidOptionError('maxPerNode', `must be >= 1, got ${o.maxPerNode}`);
  }
  if (!Number.isInteger(o.maxInFlight) || o.maxInFlight < 1) {
    throw new InvalidOptionError('maxInFlight', `must be an integer >= 1, got ${o.maxInFlight}`);
  }
  if (typeof factory !== 'function') {
    throw new InvalidArgumentError('factory', 'poolKind needs a worker factory function');
  }
  return {
    name,
    on(memberId: string): KindDefinition {
      const pool: MemberPool = {
        size: o.size,
        sizeAt: 0,
        maxPerNode: o.maxPerNode,
        maxInFlight: o.maxInFlight,
        active: new Map(),
      };
      return kind(memberKind(name, memberId), () => new PoolWorker(pool, factory), {
        // Workers live as long as their member: the pool, not idleness, decides where they run.
        idleTimeoutMs: Infinity,
        mailbox: { capacity: o.workerMailboxSize },
        shardCount: 1,
        canActivate: (id) => id === INVENTORY_ID || (/^\d+$/.test(id) && Number(id) < pool.size),
      });
    },
  };
}

/**
 * The grain behind every identity of a member's pool kind: `$inventory` reports which workers
 * run on this member; `0`..`size-1` wrap the user's worker grain, count its calls and obey the
 * client's control messages.
 */
class PoolWorker implements Grain {
  private inner: Grain | undefined;
  private index = -1;
  private activationId = '';
  private calls = 0;
  private errors = 0;

  constructor(
    private readonly pool: MemberPool,
    private readonly factory: () => Grain,
  ) {}

  onActivate(ctx: GrainContext): void | Promise<void> {
    if (ctx.identity === INVENTORY_ID) return;
    this.index = Number(ctx.identity);
    this.activationId = ctx.activationId;
    this.inner = this.factory();
    this.pool.active.set(this.index, ctx.activationId);
    return this.inner.onActivate?.(ctx);
  }

  onDeactivate(reason: DeactivationReason): void | Promise<void> {
    if (this.inner === undefined) return;
    if (this.pool.active.get(this.index) === this.activationId) this.pool.active.delete(this.index);
    return this.inner.onDeactivate?.(reason);
  }

  receive(ctx: GrainContext): unknown {
    const message = ctx.message;
    if (isControl(message)) return this.control(ctx, message);
    if (this.inner === undefined) return undefined;
    this.calls++;
    let result: unknown;
    try {
      result = this.inner.receive(ctx);
    } catch (err) {
      this.errors++;
      throw err;
    }
    if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function') {
      return Promise.resolve(result).catch((err: unknown) => {
        this.errors++;
        throw err;
      });
    }
    return result;
  }

  private control(ctx: GrainContext, message: PoolControl): unknown {
    const pool = this.pool;
    switch (message.$granaryPool) {
      case 'resize': {
        const at = message.sizeAt ?? 0;
        if (Number.isInteger(message.size) && message.size! >= 0 && at >= pool.sizeAt) {
          pool.size = message.size!;
          pool.sizeAt = at;
        }
        return this.inventory();
      }
      case 'inventory':
        return this.inventory();
      case 'retire':
        ctx.deactivate();
        return true;
      case 'stats': {
        const stats: WorkerStats = {
          index: this.index,
          member: ctx.cluster.id,
          activationId: this.activationId,
          calls: this.calls,
          errors: this.errors,
        };
        return stats;
      }
      default:
        return true; // ping: activating was the point
    }
  }

  private inventory(): Inventory {
    const pool = this.pool;
    return {
      size: pool.size,
      sizeAt: pool.sizeAt,
      maxPerNode: pool.maxPerNode,
      maxInFlight: pool.maxInFlight,
      workers: [...pool.active.keys()],
    };
  }
}

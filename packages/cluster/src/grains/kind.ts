import {
  InvalidArgumentError,
  InvalidOptionError,
  NotInfluenceReceiveTimeout,
} from '@granary/core';
import type { Grain } from './grain';
import {
  rejectUnknownNestedOptions,
  rejectUnknownOptions,
  withoutUndefined,
} from '@granary/core/internal';
import { kindStateOf, type KindState, type KindStateOptions } from './kind-state';

/** Options of a grain kind (`S`: the type of its declared state). */
export interface KindOptions<S = unknown> {
  /**
   * State the runtime keeps for each grain of the kind: loaded before the first message, read
   * and replaced as `this.state` / `ctx.state`, stored with `writeState()`, fenced by the shard
   * epoch; a conflict deactivates the grain and reaches the caller as InconsistentStateError.
   * @default undefined (the kind keeps no state)
   */
  state?: KindStateOptions<S> | undefined;
  /**
   * An activation idle this long (no message that influences idle time) passivates.
   * `Infinity` keeps activations until rebalance or shutdown.
   * @default 60000
   */
  idleTimeoutMs?: number;
  /**
   * Calls queued per activation (and held while it deactivates); a call beyond fails at once with
   * OverloadedError (`mailbox.capacity`), which the caller retries later within its retry budget.
   * A hot grain then costs its member at most this many queued calls. `Infinity`: unbounded.
   * @default { capacity: 1000 }
   */
  mailbox?: { capacity?: number };
  /**
   * Refuses identities: a call to a refused identity fails at once with ActivationDeniedError.
   * @default undefined (every identity may activate)
   */
  canActivate?: (identity: string) => boolean;
  /**
   * Shards of this kind (every member must use the same value).
   * @default the cluster's shardCount
   */
  shardCount?: number;
  /**
   * Reentrant grains (or messages the predicate accepts) interleave at await points instead of
   * queueing behind the current turn, so call cycles through them do not deadlock.
   * @default false
   */
  reentrant?: boolean | ((message: unknown) => boolean);
  /**
   * Messages for which this returns true do not reset the idle timer (e.g. health pings).
   * @default messages with `[NotInfluenceReceiveTimeout] = true`
   */
  idleNeutral?: (message: unknown) => boolean;
  /**
   * A turn running longer than this is logged (once per activation, with kind, identity and
   * duration) and counted (`Cluster.turnStats`). A turn this long holds the activation's queue;
   * a synchronous one also holds the member's event loop (see `threaded()`). `Infinity` turns it
   * off.
   * @default 1000
   */
  longTurnMs?: number;
  /**
   * An awaiting turn running longer than this is stuck: the calls queued behind it, and those
   * that arrive while it runs, fail at once with TurnTimeoutError, and the activation
   * deactivates as soon as the turn ends (no second activation starts before: single activation
   * holds). Reentrant turns do not block the queue and are exempt. A synchronous turn that never
   * ends cannot be interrupted: it holds the event loop, and the member fences itself past
   * `maxLoopStallMs`.
   * @default Infinity (no timeout)
   */
  turnTimeoutMs?: number;
}

/** A registered grain kind: pass it in `Cluster.start({ kinds })`. */
export interface KindDefinition {
  readonly name: string;
  readonly shardCount?: number | undefined;
  readonly factory: () => Grain;
  readonly idleTimeoutMs: number;
  readonly capacity: number;
  readonly canActivate: ((identity: string) => boolean) | undefined;
  readonly reentrant: (message: unknown) => boolean;
  readonly idleNeutral: (message: unknown) => boolean;
  /** True when every message is reentrant (the kind never blocks a call chain). */
  readonly alwaysReentrant: boolean;
  readonly longTurnMs: number;
  readonly turnTimeoutMs: number;
  /** The state the runtime keeps for each grain (undefined: none). */
  readonly state: KindState | undefined;
}

/** Defaults of KindOptions. */
export const DEFAULT_KIND_OPTIONS = {
  idleTimeoutMs: 60_000,
  // 1,000 calls is a second of queue behind 1 ms turns: far more than a grain that keeps up
  // ever holds, and ~0.5 MB for one that does not.
  mailbox: { capacity: 1000 },
  reentrant: false,
  longTurnMs: 1000,
  turnTimeoutMs: Infinity,
} as const;

const never = (): boolean => false;
const always = (): boolean => true;
const markedNeutral = (message: unknown): boolean =>
  message !== null &&
  typeof message === 'object' &&
  (message as { [NotInfluenceReceiveTimeout]?: boolean })[NotInfluenceReceiveTimeout] === true;

/** Every option kind() knows (the compiler keeps it in step with KindOptions). */
/** Every option of a kind's `state` (the compiler keeps it in step). */
const KIND_STATE_OPTION_KEYS = {
  store: true,
  initial: true,
  codec: true,
  persistOnDeactivate: true,
} as const satisfies Record<keyof KindStateOptions<unknown>, true>;

const KIND_OPTION_KEYS = {
  state: true,
  idleTimeoutMs: true,
  mailbox: true,
  canActivate: true,
  shardCount: true,
  reentrant: true,
  idleNeutral: true,
  longTurnMs: true,
  turnTimeoutMs: true,
} as const satisfies Record<keyof KindOptions, true>;

/**
 * Defines a grain kind: its name, how to make a grain, and how activations behave.
 *
 * @example
 * const ponger = kind('ponger', () => new Ponger(), { idleTimeoutMs: 30_000 });
 * const cluster = await Cluster.start({ name: 'demo', provider, kinds: [ponger], remote });
 * await cluster.request('ponger', 'p-1', 'ping', { timeoutMs: 1000 });
 * @throws InvalidArgumentError for a bad name or factory, InvalidOptionError naming a bad option.
 */
export function kind<S = unknown>(
  name: string,
  factory: () => Grain,
  options: KindOptions<S> = {},
): KindDefinition {
  const o = { ...DEFAULT_KIND_OPTIONS, ...withoutUndefined(options) };
  if (typeof name !== 'string' || name.length === 0 || name.includes('/')) {
    throw new InvalidArgumentError(
      'name',
      `a kind name must be a non-empty string without '/', got ${JSON.stringify(name)}`,
    );
  }
  rejectUnknownOptions(`kind('${name}')`, options, KIND_OPTION_KEYS);
  // `state: { persistOnDeactivat }` kept the default, `mailbox: { capacty }` the default capacity.
  rejectUnknownNestedOptions(`kind('${name}')`, 'state', options?.state, KIND_STATE_OPTION_KEYS);
  rejectUnknownNestedOptions(`kind('${name}')`, 'mailbox', options?.mailbox, { capacity: true });
  if (typeof factory !== 'function') {
    throw new InvalidArgumentError('factory', `kind '${name}': the factory must be a function`);
  }
  if (!(o.idleTimeoutMs > 0)) {
    throw new InvalidOptionError(
      'idleTimeoutMs',
      `kind '${name}': must be > 0, got ${o.idleTimeoutMs}`,
    );
  }
  const capacity = o.mailbox.capacity ?? DEFAULT_KIND_OPTIONS.mailbox.capacity;
  if (!(capacity >= 1)) {
    throw new InvalidOptionError(
      'mailbox.capacity',
      `kind '${name}': must be >= 1, got ${capacity}`,
    );
  }
  if (o.shardCount !== undefined && !(Number.isInteger(o.shardCount) && o.shardCount >= 1)) {
    throw new InvalidOptionError(
      'shardCount',
      `kind '${name}': must be an integer >= 1, got ${o.shardCount}`,
    );
  }
  for (const option of ['longTurnMs', 'turnTimeoutMs'] as const) {
    if (!(o[option] > 0)) {
      throw new InvalidOptionError(option, `kind '${name}': must be > 0, got ${o[option]}`);
    }
  }
  const reentrant =
    typeof o.reentrant === 'function' ? o.reentrant : o.reentrant === true ? always : never;
  return {
    name,
    shardCount: o.shardCount,
    factory,
    idleTimeoutMs: o.idleTimeoutMs,
    capacity,
    canActivate: o.canActivate,
    reentrant,
    idleNeutral: o.idleNeutral ?? markedNeutral,
    alwaysReentrant: o.reentrant === true,
    longTurnMs: o.longTurnMs,
    turnTimeoutMs: o.turnTimeoutMs,
    state: kindStateOf(name, o.state as KindStateOptions<unknown> | undefined),
  };
}

/** True for a kind made by kind() (a plain name or `{ name }` only claims shards). */
export function isKindDefinition(spec: unknown): spec is KindDefinition {
  return (
    spec !== null &&
    typeof spec === 'object' &&
    typeof (spec as KindDefinition).factory === 'function' &&
    typeof (spec as KindDefinition).reentrant === 'function'
  );
}

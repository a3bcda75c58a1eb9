import { InvalidArgumentError, type Clock, type TimerHandle, type TimerWheel } from '@granary/core';
import type {
  GrainEveryOptions,
  GrainTimer,
  GrainTimerHandler,
  GrainTimerOptions,
  GrainTimers,
} from './grain';
import { unknownOptionOf } from '@granary/core/internal';

/** What the timers need of their activation. */
export interface TimerOwner {
  /** Queues a turn for `tick` in the activation's mailbox; false when it cannot run one now. */
  postTick(tick: TimerTick): boolean;
  /** The actor system's timer wheel. */
  readonly wheel: TimerWheel;
  readonly clock: Clock;
}

/** The mailbox message of one timer fire (an activation runs it as a turn). */
export class TimerTick {
  constructor(readonly timer: ActivationTimer) {}
}

/** One timer: its own wheel target (no closure per fire). */
export class ActivationTimer implements GrainTimer {
  /** The wheel entry while scheduled. */
  private handle: TimerHandle | undefined = undefined;
  /** Monotonic ms the next fire is due. */
  private due: number;
  /** A fire is queued or running: the next one is dropped. */
  private queued = false;
  private live = true;
  private cancelled = false;

  constructor(
    private readonly set: ActivationTimerSet,
    readonly handler: GrainTimerHandler,
    /** 0 for a one-shot timer. */
    private readonly periodMs: number,
    delayMs: number,
    readonly keepAlive: boolean,
  ) {
    this.due = set.owner.clock.monotonic() + delayMs;
    this.handle = set.owner.wheel.schedule(delayMs, this);
  }

  get active(): boolean {
    return this.live;
  }

  cancel(): void {
    this.cancelled = true;
    if (!this.live) return;
    this.live = false;
    this.handle?.cancel();
    this.handle = undefined;
    this.set.removed(this);
  }

  /** @internal the wheel fired. */
  onTimer(): void {
    this.handle = undefined;
    if (!this.live) return;
    if (this.periodMs > 0) {
      // Fixed rate, no catch-up: after a stall the next fire is one period from now.
      const now = this.set.owner.clock.monotonic();
      this.due += this.periodMs;
      if (this.due <= now) this.due = now + this.periodMs;
      this.handle = this.set.owner.wheel.schedule(this.due - now, this);
    } else {
      this.live = false;
      this.set.removed(this);
    }
    if (this.queued) return;
    this.queued = this.set.owner.postTick(new TimerTick(this));
  }

  /** @internal the turn is about to run: false when the timer was cancelled meanwhile. */
  starting(): boolean {
    this.queued = false;
    return !this.cancelled;
  }
}

/** The timers of one activation; allocated on the first timer, so idle grains carry none. */
export class ActivationTimerSet implements GrainTimers {
  private readonly live = new Set<ActivationTimer>();

  constructor(readonly owner: TimerOwner) {}

  get size(): number {
    return this.live.size;
  }

  after(delayMs: number, handler: GrainTimerHandler, options?: GrainTimerOptions): GrainTimer {
    checkTimer('delayMs', delayMs, handler, 0);
    checkTimerOptions('after', options, AFTER_OPTION_KEYS);
    return this.add(new ActivationTimer(this, handler, 0, delayMs, options?.keepAlive === true));
  }

  every(periodMs: number, handler: GrainTimerHandler, options?: GrainEveryOptions): GrainTimer {
    checkTimer('periodMs', periodMs, handler, 1);
    checkTimerOptions('every', options, EVERY_OPTION_KEYS);
    const first = options?.firstDelayMs ?? periodMs;
    checkTimer('firstDelayMs', first, handler, 0);
    const keepAlive = options?.keepAlive === true;
    return this.add(new ActivationTimer(this, handler, periodMs, first, keepAlive));
  }

  /** The activation ended: every timer stops (their queued turns do not run). */
  cancelAll(): void {
    for (const t of [...this.live]) t.cancel();
  }

  /** @internal */
  removed(t: ActivationTimer): void {
    this.live.delete(t);
  }

  private add(t: ActivationTimer): ActivationTimer {
    if (t.active) this.live.add(t);
    return t;
  }
}

const AFTER_OPTION_KEYS = { keepAlive: true } as const satisfies Record<
  keyof GrainTimerOptions,
  true
>;
const EVERY_OPTION_KEYS = { keepAlive: true, firstDelayMs: true } as const satisfies Record<
  keyof GrainEveryOptions,
  true
>;

/**
 * Options from JavaScript: `{ keepalive: true }` (or `keepAlive: 'yes'`) was taken as no
 * keepAlive, so the grain passivated under its timer with no word why.
 */
function checkTimerOptions(
  method: string,
  options: object | undefined,
  known: Readonly<Record<string, true>>,
): void {
  if (options === undefined || options === null || typeof options !== 'object') return;
  const unknown = unknownOptionOf(`timers.${method}`, options, known);
  if (unknown !== undefined) throw new InvalidArgumentError(unknown.name, unknown.detail);
  const keepAlive: unknown = (options as GrainTimerOptions).keepAlive;
  if (keepAlive !== undefined && typeof keepAlive !== 'boolean') {
    throw new InvalidArgumentError('keepAlive', `must be a boolean, got ${String(keepAlive)}`);
  }
}

function checkTimer(name: string, ms: number, handler: unknown, min: number): void {
  if (!(Number.isFinite(ms) && ms >= min)) {
    throw new InvalidArgumentError(
      name,
      `a grain timer needs a finite ${name} >= ${min}, got ${ms}`,
    );
  }
  if (typeof handler !== 'function') {
    throw new InvalidArgumentError('handler', 'a grain timer needs a handler function');
  }
}

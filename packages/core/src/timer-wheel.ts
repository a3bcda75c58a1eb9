import { SYSTEM_CLOCK, type Clock } from './clock';
import { InvalidOptionError } from './errors';

/** A scheduled callback; `cancel()` is idempotent and O(1). */
export interface TimerHandle {
  cancel(): void;
}

/**
 * An object that is its own timer callback: scheduling it allocates no closure (a request's
 * future, one per request in flight).
 */
export interface TimerTarget {
  onTimer(): void;
}

/** Options of the shared timer wheel. */
export interface TimerWheelOptions {
  /**
   * Resolution: callbacks fire up to one tick late, never early.
   * @default 10
   */
  tickMs?: number;
  /**
   * Number of slots (rounded up to a power of two); a delay longer than `slots × tickMs`
   * waits for more rounds.
   * @default 512
   */
  slots?: number;
}

/** Defaults of {@link TimerWheelOptions}. */
export const DEFAULT_TIMER_WHEEL_OPTIONS: Required<TimerWheelOptions> = { tickMs: 10, slots: 512 };

class TimerEntry implements TimerHandle {
  prev: TimerEntry | null = null;
  next: TimerEntry | null = null;
  /** Slot index while linked, -1 once fired or cancelled. */
  slot = -1;

  constructor(
    readonly wheel: TimerWheel,
    readonly deadline: number,
    readonly callback: (() => void) | TimerTarget,
  ) {}

  cancel(): void {
    this.wheel.unlink(this);
  }
}

/**
 * One hashed timing wheel per ActorSystem: every receive timeout, request timeout, backoff and
 * grain idle timer lives here, driven by ONE timer of the system's clock (a setTimeout) that is
 * armed only while entries exist. 100k timers cost 100k small list nodes, not 100k Node timers.
 *
 * Entries are linked into the slot of their deadline's tick (doubly linked, so cancel is
 * O(1)); each tick visits one slot and fires the entries that are due, leaving later rounds.
 *
 * @example
 * const handle = system.timers.schedule(30_000, () => passivate());
 * handle.cancel();
 */
export class TimerWheel {
  private readonly tickMs: number;
  private readonly mask: number;
  private readonly heads: (TimerEntry | null)[];
  /** The last tick processed. */
  private tick: number;
  private count = 0;
  /** The clock's timer handle while armed. */
  private timer: unknown = undefined;
  private stopped = false;
  /** How many times the wheel armed its underlying setTimeout (for tests and metrics). */
  armCount = 0;

  constructor(
    options: TimerWheelOptions = {},
    private readonly onError: (error: unknown) => void = () => {},
    /** Where time comes from and what runs the tick (the system's clock). */
    readonly clock: Clock = SYSTEM_CLOCK,
  ) {
    const o = { ...DEFAULT_TIMER_WHEEL_OPTIONS, ...options };
    if (!(o.tickMs >= 1)) throw new InvalidOptionError('timers.tickMs', `${o.tickMs} < 1`);
    if (!(o.slots >= 1)) throw new InvalidOptionError('timers.slots', `${o.slots} < 1`);
    let slots = 1;
    while (slots < o.slots) slots <<= 1;
    this.tickMs = o.tickMs;
    this.mask = slots - 1;
    this.heads = new Array<TimerEntry | null>(slots).fill(null);
    this.tick = Math.floor(clock.monotonic() / this.tickMs);
  }

  /** Pending (not fired, not cancelled) entries. */
  get size(): number {
    return this.count;
  }

  /**
   * Runs `callback` (or `callback.onTimer()`) once, no earlier than `delayMs` from now (at most
   * one tick later).
   */
  schedule(delayMs: number, callback: (() => void) | TimerTarget): TimerHandle {
    const now = this.clock.monotonic();
    if (this.count === 0 && this.timer === undefined) this.tick = Math.floor(now / this.tickMs);
    const entry = new TimerEntry(this, now + Math.max(0, delayMs), callback);
    if (this.stopped) return entry;
    // Never into the slot being processed or a past one: the earliest slot is the next tick.
    const tick = Math.max(this.tick + 1, Math.ceil(entry.deadline / this.tickMs));
    const slot = tick & this.mask;
    entry.slot = slot;
    const head = this.heads[slot]!;
    entry.next = head;
    if (head !== null) head.prev = entry;
    this.heads[slot] = entry;
    this.count++;
    this.arm();
    return entry;
  }

  /** Cancels everything and never arms again (ActorSystem.shutdown). */
  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
    for (let i = 0; i < this.heads.length; i++) {
      for (let e = this.heads[i]!; e !== null; e = e.next!) e.slot = -1;
      this.heads[i] = null;
    }
    this.count = 0;
  }

  /** @internal */
  unlink(entry: TimerEntry): void {
    if (entry.slot < 0) return;
    if (entry.prev !== null) entry.prev.next = entry.next;
    else this.heads[entry.slot] = entry.next;
    if (entry.next !== null) entry.next.prev = entry.prev;
    entry.prev = entry.next = null;
    entry.slot = -1;
    if (--this.count === 0 && this.timer !== undefined) {
      this.clock.clearTimer(this.timer);
      this.timer = undefined;
    }
  }

  private arm(): void {
    if (this.timer !== undefined || this.count === 0 || this.stopped) return;
    const delay = Math.max(1, (this.tick + 1) * this.tickMs - this.clock.monotonic());
    this.armCount++;
    this.timer = this.clock.setTimer(this.onTick, delay);
  }

  private readonly onTick = (): void => {
    this.timer = undefined;
    const now = this.clock.monotonic();
    const target = Math.floor(now / this.tickMs);
    // After a long stall every slot is visited once, not once per missed tick.
    const from = Math.max(this.tick + 1, target - this.mask);
    const due: TimerEntry[] = [];
    for (let t = from; t <= target; t++) {
      for (let e = this.heads[t & this.mask]!; e !== null;) {
        const next = e.next;
        // Entries of a processed slot are due (slot tick = ceil(deadline / tickMs) <= target),
        // except those of a later round.
        if (e.deadline <= now) {
          this.unlink(e);
          due.push(e);
        }
        e = next!;
      }
    }
    this.tick = target;
    for (const e of due) {
      try {
        const cb = e.callback;
        if (typeof cb === 'function') cb();
        else cb.onTimer();
      } catch (error) {
        this.onError(error);
      }
    }
    this.arm();
  };
}

import type { Clock, TimerHandle, TimerWheel } from '@granary/core';
import type { Activation } from './activation';

/** Idle check retried this soon when a grain is busy at its idle deadline (one wheel tick). */
const BUSY_RECHECK_MS = 10;

/**
 * The clock of idle times, on `clock`'s monotonic time: whole ms, rounded up (never expires
 * early), so an activation's `lastActivity` holds a small integer instead of a boxed double
 * (16 B less per grain).
 */
export function idleStamp(clock: Clock): number {
  return Math.ceil(clock.monotonic());
}

/**
 * Passivation of one kind's idle activations (Orleans' idle collection): its activations in a
 * doubly linked list ordered by last activity (the kind's `idleTimeoutMs` is the same for all,
 * so that is expiry order), and ONE timer-wheel entry for the whole kind, armed for the head's
 * deadline. Activity moves an activation to the tail (O(1)); the timer deactivates every
 * expired head that is not busy. Two pointers per activation instead of a timer entry and a
 * closure each.
 */
export class Passivation {
  private head: Activation | undefined = undefined;
  private tail: Activation | undefined = undefined;
  private timer: TimerHandle | undefined = undefined;

  constructor(
    private readonly timeoutMs: number,
    private readonly timers: TimerWheel,
    private readonly clock: Clock,
    /** Deactivates an expired activation (and so calls `remove`). */
    private readonly expire: (a: Activation) => void,
  ) {}

  /** A new activation (its lastActivity is now). */
  add(a: Activation): void {
    this.append(a);
    if (this.timer === undefined) this.arm(this.timeoutMs);
  }

  /** Activity: `a` becomes the newest. */
  touch(a: Activation, now: number): void {
    a.lastActivity = now;
    if (this.tail === a || !this.has(a)) return;
    this.unlink(a);
    this.append(a);
  }

  /** The activation leaves passivation (it is deactivating). */
  remove(a: Activation): void {
    if (this.has(a)) this.unlink(a);
  }

  /** In this list (a listed activation has a predecessor or is the head). */
  private has(a: Activation): boolean {
    return a.prevIdle !== undefined || this.head === a;
  }

  private readonly fire = (now: number): void => {
    this.timer = undefined;
    let busy = false;
    let a = this.head;
    while (a !== undefined && now - a.lastActivity >= this.timeoutMs) {
      const next = a.nextIdle;
      if (a.inflight > 0) busy = true;
      else this.expire(a);
      a = next;
    }
    if (this.head === undefined) return;
    const due = a === undefined ? BUSY_RECHECK_MS : a.lastActivity + this.timeoutMs - now;
    this.arm(busy ? Math.min(BUSY_RECHECK_MS, due) : due);
  };

  private arm(delayMs: number): void {
    this.timer = this.timers.schedule(Math.max(0, delayMs), () =>
      // Rounded down, against activity stamps rounded up: a grain never expires early.
      this.fire(Math.floor(this.clock.monotonic())),
    );
  }

  private append(a: Activation): void {
    a.prevIdle = this.tail;
    a.nextIdle = undefined;
    if (this.tail !== undefined) this.tail.nextIdle = a;
    else this.head = a;
    this.tail = a;
  }

  private unlink(a: Activation): void {
    if (a.prevIdle !== undefined) a.prevIdle.nextIdle = a.nextIdle;
    else this.head = a.nextIdle;
    if (a.nextIdle !== undefined) a.nextIdle.prevIdle = a.prevIdle;
    else this.tail = a.prevIdle;
    a.prevIdle = a.nextIdle = undefined;
  }
}

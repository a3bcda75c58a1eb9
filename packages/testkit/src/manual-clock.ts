import type { Clock } from '@granary/core';

/**
 * Virtual time for tests and simulations: nothing moves until `advance`, which runs the timers
 * that fall due, earliest first, each at its due time. Give it to an ActorSystem (`clock`) and
 * to what runs beside it (a MemoryClusterTable) to drive them in virtual time.
 *
 * @example
 * const clock = new ManualClock();
 * const system = new ActorSystem({ clock });
 * clock.advance(5_000); // a request's 5 s timeout fires now
 */
export class ManualClock implements Clock {
  private t: number;
  private seq = 0;
  private readonly timers = new Map<number, { due: number; callback: () => void }>();

  /** @param start the epoch ms `now()` starts at (monotonic time reads the same). */
  constructor(start = 1_000_000) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  monotonic(): number {
    return this.t;
  }

  setTimer(callback: () => void, delayMs: number): unknown {
    const id = ++this.seq;
    this.timers.set(id, { due: this.t + delayMs, callback });
    return id;
  }

  clearTimer(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** Timers set and not yet run or cleared. */
  get pending(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, running each timer at its due time (earliest first). */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      let next: [number, { due: number; callback: () => void }] | undefined;
      for (const entry of this.timers) {
        if (entry[1].due <= end && (next === undefined || entry[1].due < next[1].due)) next = entry;
      }
      if (next === undefined) break;
      this.timers.delete(next[0]);
      this.t = Math.max(this.t, next[1].due);
      next[1].callback();
    }
    this.t = end;
  }
}

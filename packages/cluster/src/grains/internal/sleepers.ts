import type { Clock } from '@granary/core';

/**
 * The waits of calls between attempts: each resolves with false after its time, or with true as
 * soon as `wakeAll` runs (the topology changed: a new owner may be known). One entry per call
 * waiting, removed when it wakes.
 */
export class Sleepers {
  private readonly waiting = new Set<() => void>();

  constructor(private readonly clock: Clock) {}

  /** Resolves with false after `ms`, or with true as soon as the topology changes. */
  sleep(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const clock = this.clock;
      const wake = (): void => {
        clock.clearTimer(timer);
        this.waiting.delete(wake);
        resolve(true);
      };
      // A plain timer, not the system's wheel: the wheel stops at shutdown and would never wake it.
      const timer = clock.setTimer(() => {
        this.waiting.delete(wake);
        resolve(false);
      }, ms);
      this.waiting.add(wake);
    });
  }

  /** Wakes every waiting call at once. */
  wakeAll(): void {
    for (const wake of [...this.waiting]) wake();
  }
}

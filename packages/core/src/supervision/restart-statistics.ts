/** Failure timestamps of one actor, kept across restarts, for `maxRetries` within a window. */
export class RestartStatistics {
  private times: number[] = [];

  /** Records a failure at `now` (epoch ms; strategies pass the system clock's). */
  fail(now: number = Date.now()): void {
    this.times.push(now);
  }

  /** All failures recorded. */
  get failureCount(): number {
    return this.times.length;
  }

  /** Failures within the `withinMs` before `now` (older ones are forgotten). */
  failuresWithin(withinMs: number, now: number = Date.now()): number {
    const cutoff = now - withinMs;
    this.times = this.times.filter((t) => t > cutoff);
    return this.times.length;
  }

  /** Forgets every failure. */
  reset(): void {
    this.times = [];
  }
}

/**
 * Exponential backoff with jitter: the n-th delay is drawn uniformly from [d/2, d] with
 * d = min(max, initial * 2^n). Half of each delay is random, so members that failed together
 * (a whole cluster fenced by one CPU burst) spread their retries instead of storming together,
 * and no delay is ever much shorter than planned.
 */
export class JitteredBackoff {
  private attempt = 0;

  constructor(
    private readonly initialMs: number,
    private readonly maxMs: number,
    /** Uniform in [0, 1): Math.random unless a test or a simulation injects its own. */
    private readonly random: () => number = Math.random,
  ) {}

  /** The next delay; each call doubles the ceiling up to the cap. */
  next(): number {
    const ceiling = Math.min(this.maxMs, this.initialMs * 2 ** this.attempt);
    this.attempt = Math.min(this.attempt + 1, 30);
    return ceiling / 2 + (this.random() * ceiling) / 2;
  }

  /** Starts the doubling `steps` steps in (a member that keeps failing starts higher). */
  skip(steps: number): void {
    this.attempt = Math.min(this.attempt + steps, 30);
  }

  /** Back to the first delay. */
  reset(): void {
    this.attempt = 0;
  }
}

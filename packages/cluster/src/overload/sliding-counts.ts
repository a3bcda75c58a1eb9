/** Buckets of a window. */
const BUCKETS = 10;

/**
 * Two counts over a sliding window of `windowMs` (ten buckets): what the retry budget (calls,
 * retries) and an owner's throttle (requests, accepts) keep. A count goes into the bucket of the
 * time given; a bucket's counts leave the window when it is reused.
 */
export class SlidingCounts {
  /** Sums over the window. */
  first = 0;
  second = 0;
  private readonly firsts = new Array<number>(BUCKETS).fill(0);
  private readonly seconds = new Array<number>(BUCKETS).fill(0);
  private readonly bucketMs: number;
  private bucket = 0;
  private bucketEnd = 0;

  constructor(windowMs: number) {
    this.bucketMs = windowMs / BUCKETS;
  }

  /** Moves the window to `now` (monotonic ms). */
  at(now: number): this {
    if (now >= this.bucketEnd) this.advance(now);
    return this;
  }

  /** Counts one in the first count's current bucket (after `at`). */
  addFirst(): void {
    this.firsts[this.bucket]!++;
    this.first++;
  }

  /** Counts one in the second count's current bucket (after `at`). */
  addSecond(): void {
    this.seconds[this.bucket]!++;
    this.second++;
  }

  /** Forgets everything. */
  reset(): void {
    this.firsts.fill(0);
    this.seconds.fill(0);
    this.first = this.second = 0;
    this.bucketEnd = 0;
  }

  /** Moves to the bucket of `now`, emptying the buckets it passes (all of them after a pause). */
  private advance(now: number): void {
    const steps =
      this.bucketEnd === 0
        ? BUCKETS
        : Math.min(BUCKETS, 1 + Math.floor((now - this.bucketEnd) / this.bucketMs));
    for (let i = 0; i < steps; i++) {
      this.bucket = (this.bucket + 1) % BUCKETS;
      this.first -= this.firsts[this.bucket]!;
      this.second -= this.seconds[this.bucket]!;
      this.firsts[this.bucket] = 0;
      this.seconds[this.bucket] = 0;
    }
    this.bucketEnd =
      steps === BUCKETS ? now + this.bucketMs : this.bucketEnd + steps * this.bucketMs;
  }
}

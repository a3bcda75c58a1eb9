/**
 * Longest a placement or reconcile pass may hold the event loop in one turn; past it the rest
 * waits for the next turn (setImmediate), so timers, I/O and keep-alive replies interleave. A
 * pass over 4 kinds x 16,384 ranges is then ~10 turns of <= 8 ms rather than one of ~80 ms.
 */
export const TURN_BUDGET_MS = 8;

/**
 * A queue of (kind index, range) items drained in turns of at most TURN_BUDGET_MS. Items are
 * deduplicated while queued. `idle()` resolves once the queue is empty. While `paused()` is true
 * the queue keeps its items and stops draining; `resume()` starts it again.
 */
export class WorkQueue {
  private items: number[] = [];
  private head = 0;
  private readonly queued: Uint8Array[];
  private scheduled = false;
  private waiters: Array<() => void> = [];

  constructor(
    sizes: readonly number[],
    private readonly work: (kindIndex: number, range: number) => void,
    private readonly now: () => number = () => performance.now(),
    /** Asked before each item: true holds the rest until resume(). */
    private readonly paused: () => boolean = () => false,
  ) {
    this.queued = sizes.map((n) => new Uint8Array(n));
  }

  /** Queues one range of one kind. */
  push(kindIndex: number, range: number): void {
    const q = this.queued[kindIndex];
    if (q[range]) return;
    q[range] = 1;
    this.items.push(kindIndex, range);
    this.schedule();
  }

  /** Queues every range of every kind. */
  pushAll(): void {
    this.queued.forEach((q, k) => {
      for (let r = 0; r < q.length; r++) this.push(k, r);
    });
  }

  /** Drains again after a pause (no-op when nothing is queued or a drain is scheduled). */
  resume(): void {
    if (this.head < this.items.length) this.schedule();
  }

  /** Drops everything queued. */
  clear(): void {
    for (const q of this.queued) q.fill(0);
    this.items = [];
    this.head = 0;
    this.wake();
  }

  /** Resolves once nothing is queued. */
  idle(): Promise<void> {
    if (this.head >= this.items.length) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.drain());
  }

  private drain(): void {
    this.scheduled = false;
    const until = this.now() + TURN_BUDGET_MS;
    let n = 0;
    while (this.head < this.items.length) {
      if (this.paused()) return;
      const k = this.items[this.head++];
      const r = this.items[this.head++];
      this.queued[k][r] = 0;
      this.work(k, r);
      // Reading the clock every item would cost more than most items do.
      if ((++n & 63) === 0 && this.now() >= until) break;
    }
    if (this.head < this.items.length) {
      this.schedule();
      return;
    }
    this.items = [];
    this.head = 0;
    this.wake();
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}

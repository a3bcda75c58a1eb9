import { performance } from 'node:perf_hooks';

/** How often the monitor's timer ticks (ms): a late tick is the loop's delay. */
const TICK_MS = 100;

/**
 * Measures how late the event loop runs, for `/livez`: a timer ticks every 100 ms, and a tick
 * that comes late by more than its period was held up by the loop (a long synchronous turn, a
 * GC pause, a hung process). `delayMs()` is the worst delay within the window, or the delay
 * still going on (a tick overdue now) if worse: a request answered right after a 3 s stall still
 * sees the stall, since the late tick runs (timers phase) before the request is read (poll).
 * Never depends on anything outside the process (etcd, Redis).
 */
export class LoopMonitor {
  private last = performance.now();
  private worst = 0;
  private worstAt = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    /** How long a delay counts against liveness after it happened (ms). */
    private readonly windowMs: number,
  ) {
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  /** The worst event-loop delay within the window, or the one going on now (ms). */
  delayMs(): number {
    const now = performance.now();
    const overdue = now - this.last - TICK_MS;
    const recent = now - this.worstAt <= this.windowMs ? this.worst : 0;
    return Math.max(0, overdue, recent);
  }

  /** Stops the timer. */
  close(): void {
    clearInterval(this.timer);
  }

  private tick(): void {
    const now = performance.now();
    const lag = now - this.last - TICK_MS;
    if (lag > this.worst || now - this.worstAt > this.windowMs) {
      this.worst = Math.max(0, lag);
      this.worstAt = now;
    }
    this.last = now;
  }
}

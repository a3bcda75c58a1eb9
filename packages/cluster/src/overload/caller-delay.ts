/** How often the probe asks the event loop for a turn, ms. */
const PERIOD_MS = 10;
/** Share of the last delay kept per probe: a delay is forgotten in about 10 probes once gone. */
const DECAY = 0.8;
/**
 * Turns of this member's event loop a call waits for at least: one until its attempt is sent
 * (outbound frames go out when the turn that made them ends), one until its reply is read.
 */
const TURNS_PER_CALL = 2;
/**
 * Calls in flight below which no call is failed for the member's delay: a member with so few is
 * not saturated by its own calls (its loop is late for another reason: a long turn, a starved
 * host, a test's busy loop), and its calls keep their whole deadline.
 */
const MIN_OUTSTANDING = 256;

/**
 * How long this member's own event loop makes a call wait: the lateness of a timer that asks
 * for a turn every PERIOD_MS, a decaying maximum (up at once, down by DECAY per probe). A member
 * offered more calls than it can send (a server that starts a grain call per request it reads)
 * saturates its own loop; the calls it starts then wait for its turns, both to go out and for
 * their replies to be read, whatever the owners do. A call whose deadline is shorter than that
 * wait cannot be answered in time, and sending it costs the member its send, its timer and its
 * failure: time the calls that can still be answered need. `tooLate` says so before the call is
 * made (Cluster.canCall), so a saturated caller can shed it at the source, before it costs a
 * promise, and spend its CPU on the calls it can finish. One timer per member (unref'd).
 */
export class CallerDelay {
  /** Decaying maximum of the probe's lateness, ms. */
  delayMs = 0;
  private last = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly now: () => number) {
    this.last = now();
    this.timer = setInterval(() => this.tick(), PERIOD_MS);
    this.timer.unref();
  }

  /**
   * True when a call with `timeoutMs` left cannot be answered before its deadline here, while
   * the member has `outstanding` calls in flight.
   */
  tooLate(timeoutMs: number, outstanding: number): boolean {
    return outstanding >= MIN_OUTSTANDING && timeoutMs < TURNS_PER_CALL * this.delayMs;
  }

  /** Stops probing (the member stops). */
  close(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.delayMs = 0;
  }

  private tick(): void {
    const now = this.now();
    const late = Math.max(0, now - this.last - PERIOD_MS);
    this.last = now;
    const kept = this.delayMs * DECAY;
    this.delayMs = late > kept ? late : kept;
  }
}

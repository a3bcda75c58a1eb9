import type { ActorSystem } from '@granary/core';
import { IDLE, type Schedulable } from '@granary/core/internal';
import type { OverloadLimit } from './errors';
import type { ResolvedOverloadOptions } from './overload-options';

/** Who reads the run-queue delay maximum: `Cluster.overloadStats()`, or the metrics. */
export type DelayReader = 'stats' | 'metrics';

/** Probes per interval: enough samples for "above target for a whole interval". */
const PROBES_PER_INTERVAL = 10;
/** Weight of the newest completion rate in its moving average (per probe). */
const RATE_WEIGHT = 0.2;
/**
 * Pending calls below which nothing is shed, whatever the delay: a member with so short a queue
 * is not what holds its grains back (a host starved of CPU, a test's own busy loop, a long
 * synchronous turn), and refusing its few callers would only turn their calls into errors. Below
 * it the member does not start shedding either, and stops once an interval passed without a
 * refusal: the delay alone cannot tell offered load from a starved host, and on a host whose
 * other processes took the CPU it stayed above the allowance with no call pending, so the member
 * shed (not ready, `/readyz` 503) with nothing to shed, for as long as the starvation lasted.
 */
const MIN_SHED_PENDING = 64;

/**
 * Measures how long a runnable grain waits for the event loop. Every probe period it is made
 * runnable (the dispatcher's ready queue, behind every actor that has messages) and notes how
 * long it waited until its turn: the node's run-queue delay. It costs nothing per message.
 */
class RunQueueProbe implements Schedulable {
  sched = IDLE;
  /** clock.monotonic() when it was made runnable; 0 while not waiting. */
  since = 0;
  /** The delay of its last turn, ms (read by the shedder). */
  delay = 0;
  measured = false;

  constructor(
    private readonly system: ActorSystem,
    private readonly now: () => number,
  ) {}

  /** Makes it runnable, unless it still waits from the last time. */
  wake(): void {
    if (this.since !== 0) return;
    this.since = this.now();
    this.system.dispatcher.wake(this);
  }

  /** How long it has waited so far (0 when it is not waiting). */
  waiting(now: number): number {
    return this.since === 0 ? 0 : now - this.since;
  }

  runTurn(): number {
    this.delay = this.now() - this.since;
    this.since = 0;
    this.measured = true;
    this.system.dispatcher.finishTurn(this);
    return 0;
  }

  hasWork(): boolean {
    return false;
  }
}

/**
 * Load shedding for the grains a member hosts, and its bound on pending calls.
 *
 * The signal is the run-queue delay: how long a grain that has a message waits before the event
 * loop runs it (RunQueueProbe). Event-loop delay and utilisation do not show overload here: the
 * dispatcher yields to the event loop every `timeSliceMs`, so timers run on time and the loop is
 * busy alike at 95% and at 400% of capacity, while the excess piles up in mailboxes. The
 * run-queue delay grows with that pile (it is the sojourn time of the node's run queue, CoDel's
 * signal), and unlike a per-call sojourn it leaves out what is not the node's saturation: a
 * grain's own backlog behind a slow turn, turns awaiting I/O.
 *
 * The delay tolerated (the allowance) is what the calls' own deadlines allow:
 * `loadShedding.deadlineShare` of the least time left to a call admitted lately, and never less
 * than `targetMs`. A queue that the member serves well within its calls' deadlines is healthy,
 * however long it is in milliseconds (a closed-loop burst of activations with 5 s deadlines);
 * with the defaults, the member tolerates 250 ms for calls with 5 s left, and `targetMs` (50 ms)
 * for calls with 1 s or less.
 *
 * ```
 *  normal ──delay >= allowance and pending >= 64, for a whole intervalMs──▶ shedding
 *    ▲                                                                        │ new calls and
 *    └──intervalMs without refusing a call, and delay < allowance or ─────────┘ activations are
 *       pending < 64 (no offered load: a starved host)                          refused while
 *                                                                               pending >= cap
 * ```
 *
 * While shedding, a new call is accepted only while the pending calls are fewer than the member
 * completes in the allowance (its measured completion rate, and at least MIN_SHED_PENDING): the
 * queue stays about that long whatever the offered load, so accepted calls are answered in
 * time and the rest are refused at once, cheaply. Calls made by grains (a chain) to live
 * activations are let in: they are part of work already accepted. `maxPendingCalls` is a hard
 * bound in every state.
 */
export class LoadShedder {
  /** Calls accepted and not finished (queued in a mailbox, or running). */
  pending = 0;
  /** Calls finished since start (the completion rate is measured from it). */
  completed = 0;
  /** True while the member sheds. */
  shedding = false;
  /** Times the member started shedding. */
  episodes = 0;
  /** Refused calls, by the limit that refused them. */
  readonly refused = { maxPendingCalls: 0, 'mailbox.capacity': 0, loadShedding: 0 };
  /** The largest run-queue delay measured since each reader's last `takeMaxDelay`. */
  private readonly maxDelay: Record<DelayReader, number> = { stats: 0, metrics: 0 };
  private readonly probe: RunQueueProbe;
  private timer: NodeJS.Timeout | undefined = undefined;
  /** clock.monotonic() of the first probe of the current run above target; 0: none. */
  private aboveSince = 0;
  /** clock.monotonic() when a call was last refused by the shedding cap. */
  private lastRefusal = 0;
  /** Pending calls allowed while shedding: completions per `allowedMs`. */
  private cap = MIN_SHED_PENDING;
  /**
   * The run-queue delay the calls admitted lately allow, ms: `deadlineShare` of the least time
   * left to any of them, never under `targetMs` (see allowance).
   */
  private allowedMs: number;
  /** The earliest deadline (epoch ms) of a call admitted this probe period; Infinity: none. */
  private earliestDeadline = Infinity;
  /** Completions per ms, moving average. */
  private rate = 0;
  private lastCompleted = 0;
  private lastTick = 0;
  /** The probe period, ms. */
  private readonly periodMs: number;
  private readonly targetMs: number;
  private readonly deadlineShare: number;
  private readonly intervalMs: number;
  private readonly maxPending: number;

  constructor(
    private readonly system: ActorSystem,
    options: ResolvedOverloadOptions,
  ) {
    this.targetMs = options.loadShedding.targetMs;
    this.deadlineShare = options.loadShedding.deadlineShare;
    this.allowedMs = this.targetMs;
    this.intervalMs = options.loadShedding.intervalMs;
    this.maxPending = options.maxPendingCalls;
    this.probe = new RunQueueProbe(system, () => system.clock.monotonic());
    this.periodMs = this.intervalMs / PROBES_PER_INTERVAL;
    if (options.loadShedding.enabled) {
      this.timer = setInterval(() => this.tick(), this.periodMs);
      this.timer.unref();
    }
  }

  /**
   * Whether a new call may be accepted: undefined, or the limit that refuses it (counted).
   * `chain`: made by a grain; `activates`: it needs a new activation; `deadline`: the call's
   * (epoch ms), if it has one. Noting the earliest deadline costs a compare, no clock read.
   */
  admit(chain: boolean, activates: boolean, deadline?: number): OverloadLimit | undefined {
    if (deadline !== undefined && deadline < this.earliestDeadline)
      this.earliestDeadline = deadline;
    if (this.pending >= this.maxPending) {
      this.refused.maxPendingCalls++;
      return 'maxPendingCalls';
    }
    if (this.shedding && this.pending >= this.cap && (activates || !chain)) {
      this.refused.loadShedding++;
      this.lastRefusal = this.system.clock.monotonic();
      return 'loadShedding';
    }
    return undefined;
  }

  /**
   * The largest run-queue delay since this reader's last call, ms. Each reader (overloadStats,
   * the metrics' collections) has its own maximum, so neither resets what the other reports.
   */
  takeMaxDelay(reader: DelayReader): number {
    const d = this.maxDelay[reader];
    this.maxDelay[reader] = 0;
    return d;
  }

  /** Stops probing (the member stops). */
  close(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.shedding = false;
  }

  /**
   * One probe period: read the last probe (or how long the current one waits, a lower bound),
   * and how late this tick is (a synchronous turn longer than a period holds the loop and the
   * probe alike, and only the tick sees it), decide, probe again.
   */
  private tick(): void {
    const now = this.system.clock.monotonic();
    this.allowance();
    const late = this.lastTick === 0 ? 0 : now - this.lastTick - this.periodMs;
    this.measureRate(now);
    const probe = this.probe;
    let delay = late;
    if (probe.measured) {
      probe.measured = false;
      if (probe.delay > delay) delay = probe.delay;
    }
    const waiting = probe.waiting(now);
    if (waiting > delay) delay = waiting;
    this.decide(delay, now);
    probe.wake();
  }

  private measureRate(now: number): void {
    const elapsed = now - this.lastTick;
    if (this.lastTick !== 0 && elapsed > 0) {
      const rate = (this.completed - this.lastCompleted) / elapsed;
      this.rate = this.rate === 0 ? rate : this.rate + RATE_WEIGHT * (rate - this.rate);
      this.cap = Math.max(MIN_SHED_PENDING, this.rate * this.allowedMs);
    }
    this.lastTick = now;
    this.lastCompleted = this.completed;
  }

  /**
   * The run-queue delay the calls admitted this period allow: `deadlineShare` of the least time
   * any of them had left (taken at this tick: the calls admitted earlier in the period had up to
   * a period more, so this errs short), never under `targetMs`. A period that admitted no call
   * with a deadline keeps the last allowance: the queue still holds the calls it was taken from.
   * Why: a closed-loop burst (1,000 activations in flight from one caller, 5 s deadlines) keeps
   * the run queue at 50-100 ms and is served in a small share of its deadlines; shedding it at a
   * fixed 50 ms turned a healthy queue into refusals and retries (issue 15's grains-activation).
   */
  private allowance(): void {
    const earliest = this.earliestDeadline;
    if (earliest === Infinity) return;
    this.earliestDeadline = Infinity;
    const left = earliest - this.system.clock.now();
    this.allowedMs = Math.max(this.targetMs, this.deadlineShare * left);
  }

  private decide(delay: number, now: number): void {
    const max = this.maxDelay;
    if (delay > max.stats) max.stats = delay;
    if (delay > max.metrics) max.metrics = delay;
    // Without a queue of its own calls, a long delay is the host's (starved of CPU), not load.
    // A maxPendingCalls under the floor is the member's whole queue: reaching it is load.
    const above =
      delay >= this.allowedMs && this.pending >= Math.min(MIN_SHED_PENDING, this.maxPending);
    if (!this.shedding) {
      if (!above) this.aboveSince = 0;
      else if (this.aboveSince === 0) this.aboveSince = now;
      else if (now - this.aboveSince >= this.intervalMs) {
        this.shedding = true;
        this.episodes++;
        this.lastRefusal = now;
      }
      return;
    }
    if (!above && now - this.lastRefusal >= this.intervalMs) {
      this.shedding = false;
      this.aboveSince = 0;
    }
  }
}

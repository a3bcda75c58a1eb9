import { performance } from 'node:perf_hooks';
import { InvalidOptionError } from './errors';
import { RingQueue } from './internal/ring-queue';

/**
 * Per-actor scheduling states (one event loop: no workers, no CAS; the states are plain
 * numbers on the actor and each transition is one Dispatcher method):
 *
 * ```
 *            wake()                 take() (ready loop)
 *   IDLE ─────────────▶ SCHEDULED ─────────────────────▶ RUNNING
 *    ▲   (message in,     ▲  (on the ready queue,          │  │ │
 *    │    no work before) │   exactly once)                │  │ │ suspend()
 *    │                    │ finishTurn(): budget spent,    │  │ ▼ (receive returned a promise)
 *    │                    └──────── work left ─────────────┘  │ AWAITING
 *    └────────────────── finishTurn(): nothing left ──────────┘   │ (no turn runs; messages queue)
 *                                                                  │ resume(): the promise settled;
 *                                     RUNNING ◀────────────────────┘ its continuation runs, then
 *                                                                    finishTurn() as above
 *
 *   any state ── retire() ──▶ DEAD (stopped; wake() is a no-op, the registry no longer has it)
 * ```
 *
 * An IDLE actor is on no queue and holds no timer, promise or closure. A message to a
 * SCHEDULED, RUNNING or AWAITING actor is just a push into its mailbox.
 */
export const IDLE = 0;
/** On the ready queue. */
export const SCHEDULED = 1;
/** Its turn is running now. */
export const RUNNING = 2;
/** Its receive returned a promise that has not settled: no turn runs until it does. */
export const AWAITING = 3;
/** Stopped for good. */
export const DEAD = 4;

/** What the dispatcher schedules: an actor (or anything else with turns). */
export interface Schedulable {
  /** One of IDLE, SCHEDULED, RUNNING, AWAITING, DEAD; written only by the Dispatcher. */
  sched: number;
  /**
   * Processes at most `budget` messages; ends with finishTurn, suspend or retire. Returns
   * how many it processed.
   */
  runTurn(budget: number): number;
  /** True if a turn would find something to do. */
  hasWork(): boolean;
}

/** Options of the dispatcher (set through ActorSystemOptions). */
export interface DispatcherOptions {
  /**
   * Messages one actor processes per turn before it goes to the tail of the ready queue.
   * @default 64
   */
  throughput?: number;
  /**
   * The ready loop yields to the event loop (setImmediate) once it has run this long, so
   * timers and sockets run while actors are busy.
   * @default 1
   */
  timeSliceMs?: number;
}

/** Defaults of {@link DispatcherOptions}. */
export const DEFAULT_DISPATCHER_OPTIONS: Required<DispatcherOptions> = {
  // goakt measured 32 as balanced and 64 as the safe throughput upgrade; our turns are
  // cheaper than a goroutine hand-off, so 64 keeps turn overhead low at small latency cost.
  throughput: 64,
  // 1 ms: a light message's p99 behind a 1M flood measured 1.3-3.2 ms (2 ms slices: 2.4-5.5 ms),
  // for one setImmediate (~1 µs) per ms of work.
  timeSliceMs: 1,
};

/**
 * Light turns between clock reads: reading the clock (~60 ns) after every one-message turn
 * would cost more than the turn; a full-budget turn always reads it. Counted across the runs
 * of one slice, so a slice may overrun by at most this many light turns.
 */
const TURNS_PER_CLOCK_READ = 16;

/**
 * Scheduling the loop as a reaction of a resolved promise costs about half of Node's
 * queueMicrotask (which wraps each callback for async context): ~150 ns vs ~300 ns measured
 * here, paid once per idle→busy transition (once per round trip in request/response).
 */
const RESOLVED = Promise.resolve();

const LOOP_IDLE = 0;
const LOOP_PENDING = 1;
const LOOP_RUNNING = 2;

/**
 * One ready queue on the one event loop. Going from idle to busy, the loop is scheduled as a
 * microtask (lowest latency); once the loop has run longer than `timeSliceMs` it continues
 * with setImmediate, so I/O and timers always get their turn.
 *
 * The slice is counted per macrotask, not per run: a request/response chain between actors
 * and awaiting code (`for (...) await root.request(...)`) goes idle and wakes again many
 * times inside ONE macrotask, each wake a new microtask run. Counting per run let such a
 * chain hold the event loop for seconds (lease keep-alives starved). The slice opens with
 * the first run after a macrotask boundary and closes at the next one (a setImmediate
 * marker, one per slice); a run that starts with the slice spent yields first. Whether it
 * is spent is known from the clock, read every TURNS_PER_CLOCK_READ turns of the slice
 * (whichever runs they fall in) and after every full-budget turn.
 */
export class Dispatcher {
  readonly throughput: number;
  readonly timeSliceMs: number;
  private readonly ready = new RingQueue<Schedulable>();
  private loop = LOOP_IDLE;
  /** Loops that hit the time slice and yielded (for tests and metrics). */
  yields = 0;
  /** True from the first run of a macrotask until the setImmediate marker of that slice runs. */
  private sliceOpen = false;
  /** When the open slice is spent. */
  private sliceEnd = 0;
  /** Turns and messages since the clock was last read (in this slice). */
  private turns = 0;
  private messages = 0;

  constructor(
    options: DispatcherOptions = {},
    private readonly onError: (error: unknown) => void = () => {},
  ) {
    const o = { ...DEFAULT_DISPATCHER_OPTIONS, ...options };
    if (!(Number.isInteger(o.throughput) && o.throughput >= 1)) {
      throw new InvalidOptionError('throughput', `${o.throughput} is not an integer >= 1`);
    }
    if (!(o.timeSliceMs > 0)) {
      throw new InvalidOptionError('timeSliceMs', `${o.timeSliceMs} is not a positive number`);
    }
    this.throughput = o.throughput;
    this.timeSliceMs = o.timeSliceMs;
  }

  /** Actors waiting for a turn. */
  get readyCount(): number {
    return this.ready.length;
  }

  /** IDLE → SCHEDULED: a message arrived for an actor that had none. */
  wake(s: Schedulable): void {
    if (s.sched !== IDLE) return;
    s.sched = SCHEDULED;
    this.enqueue(s);
  }

  /** RUNNING → SCHEDULED (work left, to the tail) or → IDLE (nothing left). */
  finishTurn(s: Schedulable): void {
    if (s.sched !== RUNNING) return;
    if (s.hasWork()) {
      s.sched = SCHEDULED;
      this.enqueue(s);
    } else s.sched = IDLE;
  }

  /** RUNNING → AWAITING: receive returned a promise; no turn runs until resume(). */
  suspend(s: Schedulable): void {
    if (s.sched === RUNNING) s.sched = AWAITING;
  }

  /**
   * AWAITING → RUNNING: the awaited promise settled and its continuation runs as the rest of
   * the same turn (nothing else of this actor ran meanwhile); the actor then calls
   * finishTurn. Returns false (nothing to do) if the actor was not awaiting.
   */
  resume(s: Schedulable): boolean {
    if (s.sched !== AWAITING) return false;
    s.sched = RUNNING;
    return true;
  }

  /** any → DEAD. */
  retire(s: Schedulable): void {
    s.sched = DEAD;
  }

  private enqueue(s: Schedulable): void {
    this.ready.push(s);
    if (this.loop === LOOP_IDLE) {
      this.loop = LOOP_PENDING;
      RESOLVED.then(this.run);
    }
  }

  /** Runs at the next macrotask boundary after a slice opened: the next run opens a new one. */
  private readonly closeSlice = (): void => {
    this.sliceOpen = false;
  };

  /** Yields the rest of the ready loop to the event loop (timers and I/O run first). */
  private yieldLoop(): void {
    this.yields++;
    this.loop = LOOP_PENDING;
    setImmediate(this.run);
  }

  private readonly run = (): void => {
    if (!this.sliceOpen) {
      this.sliceOpen = true;
      this.sliceEnd = performance.now() + this.timeSliceMs;
      this.turns = this.messages = 0;
      setImmediate(this.closeSlice);
    } else if (
      (this.turns >= TURNS_PER_CLOCK_READ || this.messages >= this.throughput) &&
      this.sliceSpent()
    ) {
      // Still inside the macrotask whose slice is spent (a microtask chain): yield first.
      this.yieldLoop();
      return;
    }
    this.loop = LOOP_RUNNING;
    const ready = this.ready;
    const budget = this.throughput;
    // Counted across the runs of one slice: a request/response chain is one short run per
    // round trip, and a clock read per run (~50 ns) was ~5% of a local round trip.
    let turns = this.turns;
    let messages = this.messages;
    for (let s = ready.shift(); s !== undefined; s = ready.shift()) {
      // SCHEDULED → RUNNING (take); an actor retired while queued is skipped.
      if (s.sched !== SCHEDULED) continue;
      s.sched = RUNNING;
      try {
        messages += s.runTurn(budget);
      } catch (error) {
        // A runtime bug, not user code (turns catch what receive throws): keep the loop alive.
        this.onError(error);
        this.finishTurn(s);
      }
      if (++turns < TURNS_PER_CLOCK_READ && messages < budget) continue;
      if (performance.now() < this.sliceEnd) turns = messages = 0;
      else if (ready.length !== 0) {
        this.yieldLoop();
        return;
      }
      // Spent with nothing ready: the counters stay up, so the next run in this macrotask
      // reads the clock at once and yields.
    }
    this.turns = turns;
    this.messages = messages;
    this.loop = LOOP_IDLE;
  };

  /** Reads the clock: true if the open slice is spent (else the turn counters restart). */
  private sliceSpent(): boolean {
    if (performance.now() >= this.sliceEnd) return true;
    this.turns = this.messages = 0;
    return false;
  }
}

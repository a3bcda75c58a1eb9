import {
  ROOT_CONTEXT,
  type Attributes,
  type BatchObservableResult,
  type Histogram,
  type Observable,
} from '@opentelemetry/api';
import {
  ATTR_CALL_OUTCOME,
  ATTR_GRAIN_KIND,
  ATTR_RPC_METHOD,
  type CallOutcome,
} from './attributes';

const OUTCOMES: readonly CallOutcome[] = [
  'ok',
  'app_error',
  'deadline_exceeded',
  'outcome_unknown',
  'error',
  'retried',
];

type Counts = Record<CallOutcome, number>;

function zero(): Counts {
  return { ok: 0, app_error: 0, deadline_exceeded: 0, outcome_unknown: 0, error: 0, retried: 0 };
}

/** Durations held before they go to the histogram at once (bounds the buffer). */
const MAX_PENDING = 8192;
/** Longest a duration waits for the histogram, ms (a collection takes them all at once). */
const FLUSH_AFTER_MS = 1;

/**
 * The caller's call metrics: calls by kind and outcome are counted here (plain integers, read
 * by the observable counter at each collection: exact, and nothing per call but an increment),
 * and each call's duration goes to the histogram with one cached attribute object per kind,
 * method and outcome (no allocation per call).
 *
 * Durations are buffered and recorded a millisecond later (or at once when a collection comes,
 * so every collection sees every call that ended before it): the SDK hashes the attribute set
 * on every `record` (~1 µs; 14% of the caller's CPU in grains-calls-telemetry, profiled), and
 * done on the reply path that work delayed the calls the replies set off; done in the timers
 * phase it runs beside the grains' work instead of in front of it.
 */
export class CallMetrics {
  private readonly counts = new Map<string, Counts>();
  private readonly attributes = new Map<
    string,
    Map<string, Partial<Record<CallOutcome, Attributes>>>
  >();
  private readonly totals = new Map<string, Record<CallOutcome, Attributes>>();
  private readonly pendingValues: number[] = [];
  private readonly pendingAttributes: Attributes[] = [];
  private timer: NodeJS.Timeout | undefined = undefined;
  private readonly flushSoon = (): void => {
    this.timer = undefined;
    this.flush();
  };

  constructor(
    private readonly histogram: Histogram,
    private readonly calls: Observable,
  ) {}

  /** One call of `kind` ended with `outcome` (or one attempt was retried). */
  count(kind: string, outcome: CallOutcome): void {
    let c = this.counts.get(kind);
    if (c === undefined) this.counts.set(kind, (c = zero()));
    c[outcome]++;
  }

  /** One call's duration (s): in the histogram within FLUSH_AFTER_MS, or at the next collection. */
  duration(kind: string, method: string, outcome: CallOutcome, seconds: number): void {
    const n = this.pendingValues.push(seconds);
    this.pendingAttributes.push(this.attributesOf(kind, method, outcome));
    if (n >= MAX_PENDING) this.flush();
    else if (this.timer === undefined) {
      this.timer = setTimeout(this.flushSoon, FLUSH_AFTER_MS);
      this.timer.unref();
    }
  }

  /** Records the buffered durations (a collection, the member's shutdown, the timer). */
  flush(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const values = this.pendingValues;
    const attributes = this.pendingAttributes;
    const histogram = this.histogram;
    // The context is given: a buffered duration belongs to no trace, and an SDK with a View
    // would otherwise look the active context up on every record.
    const ctx = ROOT_CONTEXT;
    for (let i = 0; i < values.length; i++) histogram.record(values[i]!, attributes[i], ctx);
    values.length = 0;
    attributes.length = 0;
  }

  /** Calls so far of `kind` by outcome (tests, the admin API). */
  countsOf(kind: string): Readonly<Counts> {
    return this.counts.get(kind) ?? zero();
  }

  /**
   * Reports the counts (batch observable callback), the durations so far recorded first: every
   * outcome of each kind called and of each kind in `known` (the hosted kinds), zeros included,
   * so the series exist from the start (an alert on a rise of `error` sees the first one).
   */
  observe(result: BatchObservableResult, known: Iterable<string>): void {
    this.flush();
    for (const kind of known) {
      if (!this.counts.has(kind)) this.counts.set(kind, zero());
    }
    for (const [kind, c] of this.counts) {
      const byOutcome = this.totalAttributesOf(kind);
      for (const outcome of OUTCOMES) result.observe(this.calls, c[outcome], byOutcome[outcome]);
    }
  }

  /** The attribute objects of a kind's counts, made once per kind. */
  private totalAttributesOf(kind: string): Record<CallOutcome, Attributes> {
    let a = this.totals.get(kind);
    if (a === undefined) {
      const made = {} as Record<CallOutcome, Attributes>;
      for (const outcome of OUTCOMES) {
        made[outcome] = { [ATTR_GRAIN_KIND]: kind, [ATTR_CALL_OUTCOME]: outcome };
      }
      this.totals.set(kind, (a = made));
    }
    return a;
  }

  private attributesOf(kind: string, method: string, outcome: CallOutcome): Attributes {
    let byMethod = this.attributes.get(kind);
    if (byMethod === undefined) this.attributes.set(kind, (byMethod = new Map()));
    let byOutcome = byMethod.get(method);
    if (byOutcome === undefined) byMethod.set(method, (byOutcome = {}));
    return (byOutcome[outcome] ??= {
      [ATTR_GRAIN_KIND]: kind,
      [ATTR_RPC_METHOD]: method,
      [ATTR_CALL_OUTCOME]: outcome,
    });
  }
}

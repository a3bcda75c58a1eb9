import type { Attributes, BatchObservableResult, Histogram, Observable } from '@opentelemetry/api';
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

/**
 * The caller's call metrics: calls by kind and outcome are counted here (plain integers, read
 * by the observable counter at each collection: exact, and nothing per call but an increment),
 * and each call's duration goes to the histogram with one cached attribute object per kind,
 * method and outcome (no allocation per call).
 */
export class CallMetrics {
  private readonly counts = new Map<string, Counts>();
  private readonly attributes = new Map<
    string,
    Map<string, Partial<Record<CallOutcome, Attributes>>>
  >();

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

  /** One call's duration (s). */
  duration(kind: string, method: string, outcome: CallOutcome, seconds: number): void {
    this.histogram.record(seconds, this.attributesOf(kind, method, outcome));
  }

  /** Calls so far of `kind` by outcome (tests, the admin API). */
  countsOf(kind: string): Readonly<Counts> {
    return this.counts.get(kind) ?? zero();
  }

  /** Reports the counts (batch observable callback). */
  observe(result: BatchObservableResult): void {
    for (const [kind, c] of this.counts) {
      for (const outcome of OUTCOMES) {
        if (c[outcome] > 0) {
          result.observe(this.calls, c[outcome], {
            [ATTR_GRAIN_KIND]: kind,
            [ATTR_CALL_OUTCOME]: outcome,
          });
        }
      }
    }
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

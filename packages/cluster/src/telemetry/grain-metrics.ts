import type { Attributes, BatchObservableResult, Histogram, Observable } from '@opentelemetry/api';
import { ATTR_GRAIN_KIND, ATTR_OUTCOME, ATTR_STATE_OPERATION } from './attributes';

/** A state store operation, as the state metrics name it. */
export type StateOperation = 'read' | 'write' | 'clear';

/**
 * How a state operation ended: `ok`, `conflict` (version or epoch, InconsistentStateError),
 * `unavailable` (the store could not be reached in time), `error` (anything else: a decode
 * failure, a lost state).
 */
export type StateOutcome = 'ok' | 'conflict' | 'unavailable' | 'error';

const STATE_OPERATIONS: readonly StateOperation[] = ['read', 'write', 'clear'];
const STATE_OUTCOMES: readonly StateOutcome[] = ['ok', 'conflict', 'unavailable', 'error'];

/**
 * The histograms of the grain lifecycle a member records one value at a time (activation and
 * state operation durations), with cached attribute objects, and the state operation counts
 * (counted here, reported by an observable counter: exact, an increment per operation).
 */
export class GrainMetrics {
  private readonly cache = new Map<string, Attributes>();
  private readonly stateCounts = new Map<string, { attributes: Attributes; n: number }>();

  constructor(
    private readonly activationDuration: Histogram,
    private readonly stateDuration: Histogram,
    private readonly stateOperations: Observable,
  ) {}

  /** onActivate of a grain of `kind` ran for `ms` (`ok`: it did not throw). */
  activation(kind: string, ok: boolean, ms: number): void {
    const outcome = ok ? 'ok' : 'failed';
    this.activationDuration.record(
      ms / 1000,
      this.attributes(`a\0${kind}\0${outcome}`, {
        [ATTR_GRAIN_KIND]: kind,
        [ATTR_OUTCOME]: outcome,
      }),
    );
  }

  /** One state operation of a grain of `kind` ended with `outcome` after `ms`. */
  state(kind: string, operation: StateOperation, outcome: StateOutcome, ms: number): void {
    const key = `s\0${kind}\0${operation}\0${outcome}`;
    const attributes = this.stateAttributes(key, kind, operation, outcome);
    this.stateDuration.record(ms / 1000, attributes);
    const c = this.stateCounts.get(key);
    if (c === undefined) this.stateCounts.set(key, { attributes, n: 1 });
    else c.n++;
  }

  /**
   * Reports the state operation counts (batch observable callback): every operation and
   * outcome of each kind in `stateKinds` (the hosted kinds that declare state) and of each kind
   * that has run one, zeros included, so a dashboard's series and an alert on a rise of
   * `conflict` or `unavailable` exist from the start, not from the first such operation.
   */
  observe(result: BatchObservableResult, stateKinds: Iterable<string>): void {
    const kinds = new Set(stateKinds);
    for (const c of this.stateCounts.values()) kinds.add(c.attributes[ATTR_GRAIN_KIND] as string);
    for (const kind of kinds) {
      for (const operation of STATE_OPERATIONS) {
        for (const outcome of STATE_OUTCOMES) {
          const key = `s\0${kind}\0${operation}\0${outcome}`;
          const c = this.stateCounts.get(key);
          result.observe(
            this.stateOperations,
            c?.n ?? 0,
            c?.attributes ?? this.stateAttributes(key, kind, operation, outcome),
          );
        }
      }
    }
  }

  private stateAttributes(
    key: string,
    kind: string,
    operation: StateOperation,
    outcome: StateOutcome,
  ): Attributes {
    return this.attributes(key, {
      [ATTR_GRAIN_KIND]: kind,
      [ATTR_STATE_OPERATION]: operation,
      [ATTR_OUTCOME]: outcome,
    });
  }

  private attributes(key: string, make: Attributes): Attributes {
    let a = this.cache.get(key);
    if (a === undefined) this.cache.set(key, (a = make));
    return a;
  }
}

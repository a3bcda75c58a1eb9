import { SpanKind, context } from '@opentelemetry/api';
import { InconsistentStateError, StateUnavailableError } from '../state/errors';
import { ATTR_GRAIN_KEY, ATTR_GRAIN_KIND, ATTR_STATE_OPERATION } from './attributes';
import type { GrainMetrics, StateOperation, StateOutcome } from './grain-metrics';
import { endSpan, type ClusterTelemetry } from './telemetry';

/** Span names of state store operations. */
const SPAN_NAMES: Record<StateOperation, string> = {
  read: 'granary.state.read',
  write: 'granary.state.write',
  clear: 'granary.state.clear',
};

/**
 * Observes the state store operations of a member's grains (`PersistentState`): a span per
 * read, write and clear (a child of the turn or activation that made it) and the state metrics
 * (duration and count by outcome). Without tracing or metrics it just runs the operation.
 */
export class StateTelemetry {
  constructor(
    private readonly telemetry: ClusterTelemetry,
    private readonly metrics: GrainMetrics | undefined,
    private readonly monotonic: () => number,
  ) {}

  /** Runs `op`, the `operation` of grain `kind/id` on the store, observed. */
  observe<R>(
    operation: StateOperation,
    kind: string,
    id: string,
    op: () => Promise<R>,
  ): Promise<R> {
    const tracing = this.telemetry.tracing;
    const metrics = this.metrics;
    if (!tracing && metrics === undefined) return op();
    const span = tracing
      ? this.telemetry.startSpan(
          SPAN_NAMES[operation],
          SpanKind.CLIENT,
          { [ATTR_GRAIN_KIND]: kind, [ATTR_GRAIN_KEY]: id, [ATTR_STATE_OPERATION]: operation },
          context.active(),
        )
      : undefined;
    const t0 = metrics === undefined ? 0 : this.monotonic();
    const done = (outcome: StateOutcome): void =>
      metrics?.state(kind, operation, outcome, this.monotonic() - t0);
    return op().then(
      (result) => {
        done('ok');
        if (span !== undefined) endSpan(span);
        return result;
      },
      (err: unknown) => {
        done(stateOutcomeOf(err));
        if (span !== undefined) endSpan(span, err);
        throw err;
      },
    );
  }
}

/** The state metrics' outcome of a failed operation. */
export function stateOutcomeOf(error: unknown): StateOutcome {
  if (InconsistentStateError.is(error)) return 'conflict';
  if (StateUnavailableError.is(error)) return 'unavailable';
  return 'error';
}

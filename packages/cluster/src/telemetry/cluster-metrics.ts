import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { BatchObservableResult, Meter, Observable } from '@opentelemetry/api';
import {
  ATTR_DIRECTION,
  ATTR_GRAIN_KIND,
  ATTR_MEMBER_STATUS,
  ATTR_OUTCOME,
  ATTR_REASON,
} from './attributes';
import { CallMetrics } from './call-metrics';
import { GrainMetrics } from './grain-metrics';
import { OverloadMetrics } from './overload-metrics';
import type { OverloadStats } from '../overload/overload-stats';
import { DEACTIVATION_REASONS } from '../grains/grain';
import { SHARD_RELEASE_REASONS } from '../membership/cluster-events';

/** Buckets of the duration histograms (s): 0.5 ms to 10 s, a grain call's range. */
const DURATION_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/**
 * Dead-letter reasons core documents (DeadLetterEvent.reason), reported at 0 until the first:
 * other reasons (an error's code) appear when they first happen.
 */
const DEAD_LETTER_REASONS = ['not-found', 'mailbox-full', 'stopped', 'late-reply'];

/** Resolution of the event-loop delay sampler (ms): finer costs a timer wake-up more often. */
const LOOP_DELAY_RESOLUTION_MS = 20;

/** A hosted kind's counters, as the activator keeps them. */
export interface KindCounters {
  readonly active: number;
  readonly queued: number;
  readonly mailboxRejections: number;
  readonly longTurns: number;
  readonly timedOutTurns: number;
  readonly deactivations: ReadonlyMap<string, number>;
  /** The kind declares its state (`state` option): its state operations are reported from start. */
  readonly hasState: boolean;
}

/** Shard claim counters of one kind. */
export interface ClaimCounters {
  readonly held: number;
  readonly acquired: number;
  readonly conflicts: number;
  readonly failed: number;
  readonly releases: ReadonlyMap<string, number>;
}

/** Remote traffic counters (core's remote). */
export interface TrafficCounters {
  readonly framesIn: number;
  readonly framesOut: number;
  readonly bytesIn: number;
  readonly bytesOut: number;
}

/** Where the observable instruments read their values (the member's parts). */
export interface MetricSources {
  kinds(): Iterable<[string, KindCounters]>;
  claims(): Iterable<[string, ClaimCounters]>;
  leaseLosses(): number;
  /** Members of the current topology by status. */
  members(): Iterable<[string, number]>;
  deadLetters(): Iterable<[string, number]>;
  /** Remote endpoints this member keeps (undefined without a remote). */
  endpoints(): number | undefined;
  traffic(): TrafficCounters | undefined;
  /** The member's overload figures (its run-queue delay maximum is the metrics' own). */
  overload(): OverloadStats;
}

/**
 * The member's instruments (the catalog is docs/metrics.md): histograms recorded one value at
 * a time (call, activation and state operation durations) and everything else observed from
 * the counters the member's parts keep anyway, read once per collection by one batch callback.
 * Counting costs an integer increment on the hot path, and the values are exact.
 */
export class ClusterMetrics {
  readonly calls: CallMetrics;
  readonly grains: GrainMetrics;
  private readonly overload: OverloadMetrics;
  private readonly loopDelay: IntervalHistogram;
  private readonly observables: Record<string, Observable>;
  private readonly callback: (result: BatchObservableResult) => void;

  constructor(
    private readonly meter: Meter,
    private readonly sources: MetricSources,
  ) {
    const histogram = (name: string, description: string) =>
      meter.createHistogram(name, {
        description,
        unit: 's',
        advice: { explicitBucketBoundaries: DURATION_BUCKETS },
      });
    const counter = (name: string, unit: string, description: string) =>
      meter.createObservableCounter(name, { unit, description });
    const upDown = (name: string, unit: string, description: string) =>
      meter.createObservableUpDownCounter(name, { unit, description });
    const gauge = (name: string, unit: string, description: string) =>
      meter.createObservableGauge(name, { unit, description });
    const o = (this.observables = {
      calls: counter(
        'granary.grain.calls',
        '{call}',
        'Grain calls made by this member, by kind and outcome; retried counts attempts tried again',
      ),
      activations: upDown(
        'granary.grain.activations',
        '{activation}',
        'Live grain activations on this member',
      ),
      deactivations: counter(
        'granary.grain.deactivations',
        '{deactivation}',
        'Activations ended, by reason',
      ),
      mailboxDepth: gauge(
        'granary.grain.mailbox.depth',
        '{message}',
        'Messages posted to the activations of a kind and not finished',
      ),
      mailboxRejections: counter(
        'granary.grain.mailbox.rejections',
        '{call}',
        'Calls refused because a grain mailbox was full',
      ),
      longTurns: counter(
        'granary.grain.turns.long',
        '{turn}',
        "Turns that ran longer than the kind's longTurnMs",
      ),
      timedOutTurns: counter(
        'granary.grain.turns.timed_out',
        '{turn}',
        "Turns found stuck past the kind's turnTimeoutMs",
      ),
      stateOperations: counter(
        'granary.state.operations',
        '{operation}',
        'State store reads, writes and clears, by outcome',
      ),
      shardsHeld: upDown('granary.shards.held', '{shard}', 'Shards this member holds a claim on'),
      claims: counter(
        'granary.shard.claims',
        '{claim}',
        'Shard claims attempted, by outcome (acquired, conflict, failed)',
      ),
      releases: counter(
        'granary.shard.releases',
        '{shard}',
        'Shards this member stopped holding, by reason',
      ),
      leaseLosses: counter(
        'granary.lease.losses',
        '{loss}',
        'Times this member lost its lease and fenced itself',
      ),
      members: gauge(
        'granary.members',
        '{member}',
        'Members of the topology this member sees, by status',
      ),
      deadLetters: counter(
        'granary.dead_letters',
        '{message}',
        'Messages that could not be delivered, by reason',
      ),
      endpoints: gauge(
        'granary.remote.endpoints',
        '{endpoint}',
        'Remote endpoints (links to other members) this member keeps',
      ),
      frames: counter(
        'granary.remote.frames',
        '{frame}',
        'Remote frames sent (out) and received (in)',
      ),
      bytes: counter(
        'granary.remote.bytes',
        'By',
        'Remote frame bytes sent (out) and received (in)',
      ),
      loopP50: gauge(
        'granary.event_loop.delay.p50',
        's',
        'Median event-loop delay since the last collection',
      ),
      loopP99: gauge(
        'granary.event_loop.delay.p99',
        's',
        '99th percentile event-loop delay since the last collection',
      ),
      loopMax: gauge(
        'granary.event_loop.delay.max',
        's',
        'Longest event-loop delay since the last collection',
      ),
    });
    this.calls = new CallMetrics(
      histogram(
        'granary.grain.call.duration',
        'Duration of grain calls made by this member, retries included',
      ),
      o.calls!,
    );
    this.grains = new GrainMetrics(
      histogram(
        'granary.grain.activation.duration',
        'Duration of onActivate (state load included), by outcome',
      ),
      histogram('granary.state.duration', 'Duration of state store operations, by outcome'),
      o.stateOperations!,
    );
    this.overload = new OverloadMetrics(meter);
    this.loopDelay = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
    this.loopDelay.enable();
    this.callback = (result) => this.observe(result);
    meter.addBatchObservableCallback(this.callback, this.instruments());
  }

  /** Every observable instrument the batch callback reports. */
  private instruments(): Observable[] {
    return [...Object.values(this.observables), ...this.overload.instruments];
  }

  /** Stops observing (the member shut down). */
  close(): void {
    this.calls.flush();
    this.meter.removeBatchObservableCallback(this.callback, this.instruments());
    this.loopDelay.disable();
  }

  /**
   * Reports every instrument's values. Counters by reason report each reason the member can
   * count at 0 before its first event, so a dashboard's series exist from the start and a rate
   * or increase over the first event is not lost (Prometheus sees a series appear, not rise).
   */
  private observe(result: BatchObservableResult): void {
    const o = this.observables;
    const s = this.sources;
    const kinds = [...s.kinds()];
    this.calls.observe(
      result,
      kinds.map(([kind]) => kind),
    );
    this.grains.observe(
      result,
      kinds.filter(([, k]) => k.hasState).map(([kind]) => kind),
    );
    this.overload.observe(result, s.overload());
    for (const [kind, k] of kinds) {
      const a = { [ATTR_GRAIN_KIND]: kind };
      result.observe(o.activations!, k.active, a);
      result.observe(o.mailboxDepth!, k.queued, a);
      result.observe(o.mailboxRejections!, k.mailboxRejections, a);
      result.observe(o.longTurns!, k.longTurns, a);
      result.observe(o.timedOutTurns!, k.timedOutTurns, a);
      for (const [reason, n] of withZeros(DEACTIVATION_REASONS, k.deactivations)) {
        result.observe(o.deactivations!, n, { [ATTR_GRAIN_KIND]: kind, [ATTR_REASON]: reason });
      }
    }
    for (const [kind, c] of s.claims()) {
      const a = { [ATTR_GRAIN_KIND]: kind };
      result.observe(o.shardsHeld!, c.held, a);
      result.observe(o.claims!, c.acquired, { ...a, [ATTR_OUTCOME]: 'acquired' });
      result.observe(o.claims!, c.conflicts, { ...a, [ATTR_OUTCOME]: 'conflict' });
      result.observe(o.claims!, c.failed, { ...a, [ATTR_OUTCOME]: 'failed' });
      for (const [reason, n] of withZeros(SHARD_RELEASE_REASONS, c.releases)) {
        result.observe(o.releases!, n, { ...a, [ATTR_REASON]: reason });
      }
    }
    result.observe(o.leaseLosses!, s.leaseLosses());
    for (const [status, n] of s.members()) {
      result.observe(o.members!, n, { [ATTR_MEMBER_STATUS]: status });
    }
    for (const [reason, n] of withZeros(DEAD_LETTER_REASONS, s.deadLetters())) {
      result.observe(o.deadLetters!, n, { [ATTR_REASON]: reason });
    }
    const endpoints = s.endpoints();
    if (endpoints !== undefined) result.observe(o.endpoints!, endpoints);
    const t = s.traffic();
    if (t !== undefined) {
      result.observe(o.frames!, t.framesIn, { [ATTR_DIRECTION]: 'in' });
      result.observe(o.frames!, t.framesOut, { [ATTR_DIRECTION]: 'out' });
      result.observe(o.bytes!, t.bytesIn, { [ATTR_DIRECTION]: 'in' });
      result.observe(o.bytes!, t.bytesOut, { [ATTR_DIRECTION]: 'out' });
    }
    const h = this.loopDelay;
    if (h.count > 0) {
      // The histogram is in ns; each collection reports the delays since the previous one.
      result.observe(o.loopP50!, h.percentile(50) / 1e9);
      result.observe(o.loopP99!, h.percentile(99) / 1e9);
      result.observe(o.loopMax!, h.max / 1e9);
      h.reset();
    }
  }
}

/** `counted` with each of `known` not in it as 0, the known first. */
function withZeros(
  known: readonly string[],
  counted: Iterable<[string, number]>,
): Map<string, number> {
  const all = new Map<string, number>();
  for (const reason of known) all.set(reason, 0);
  for (const [reason, n] of counted) all.set(reason, n);
  return all;
}

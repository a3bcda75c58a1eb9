import type { BatchObservableResult, Meter, Observable } from '@opentelemetry/api';
import type { OverloadLimit } from '../overload/errors';
import type { OverloadStats } from '../overload/overload-stats';
import { ATTR_OUTCOME, ATTR_OVERLOAD_LIMIT, ATTR_OVERLOAD_STAGE } from './attributes';

const LIMITS: readonly OverloadLimit[] = [
  'maxOutstandingCalls',
  'maxPendingCalls',
  'mailbox.capacity',
  'loadShedding',
];
const STAGES = ['send', 'arrival', 'mailbox', 'reply'] as const;

/**
 * The overload instruments (docs/overload.md, docs/metrics.md): what `Cluster.overloadStats()`
 * reports, observed once per collection from the counters the member keeps anyway (nothing on
 * the call paths). Every limit and stage is reported, zeros included, so a dashboard's series
 * exist before the first refusal.
 */
export class OverloadMetrics {
  /** The instruments, for the batch observable callback's registration. */
  readonly instruments: Observable[];
  private readonly outstanding: Observable;
  private readonly pending: Observable;
  private readonly shedding: Observable;
  private readonly episodes: Observable;
  private readonly delay: Observable;
  private readonly refusals: Observable;
  private readonly heldBack: Observable;
  private readonly drops: Observable;
  private readonly retries: Observable;
  /** Attribute objects made once (collections allocate none). */
  private readonly limitAttrs = LIMITS.map((l) => [l, { [ATTR_OVERLOAD_LIMIT]: l }] as const);
  private readonly stageAttrs = STAGES.map((s) => [s, { [ATTR_OVERLOAD_STAGE]: s }] as const);
  private readonly spent = { [ATTR_OUTCOME]: 'spent' };
  private readonly refusedByBudget = { [ATTR_OUTCOME]: 'refused' };

  constructor(meter: Meter) {
    const counter = (name: string, unit: string, description: string) =>
      meter.createObservableCounter(name, { unit, description });
    this.outstanding = meter.createObservableUpDownCounter('granary.overload.outstanding', {
      unit: '{call}',
      description: 'Grain calls this member made that are in flight (bound: maxOutstandingCalls)',
    });
    this.pending = meter.createObservableUpDownCounter('granary.overload.pending', {
      unit: '{call}',
      description: 'Calls this member accepted as owner and has not finished (maxPendingCalls)',
    });
    this.shedding = meter.createObservableGauge('granary.overload.shedding', {
      unit: '1',
      description: '1 while this member sheds load, else 0',
    });
    this.episodes = counter(
      'granary.overload.shedding.episodes',
      '{episode}',
      'Times this member started shedding load',
    );
    this.delay = meter.createObservableGauge('granary.overload.run_queue.delay.max', {
      unit: 's',
      description: 'Longest run-queue delay (the shedding signal) since the previous collection',
    });
    this.refusals = counter(
      'granary.overload.refusals',
      '{call}',
      'Calls this member refused with OverloadedError, by the limit that refused them',
    );
    this.heldBack = counter(
      'granary.overload.held_back',
      '{call}',
      'Calls this member failed itself, held back from an owner that sheds load',
    );
    this.drops = counter(
      'granary.overload.drops',
      '{call}',
      "Work dropped because its caller's deadline had passed, by where it waited",
    );
    this.retries = counter(
      'granary.overload.retries',
      '{retry}',
      'Retries after OverloadedError: spent, and refused by the retry budget',
    );
    this.instruments = [
      this.outstanding,
      this.pending,
      this.shedding,
      this.episodes,
      this.delay,
      this.refusals,
      this.heldBack,
      this.drops,
      this.retries,
    ];
  }

  /** Reports one reading of the member's overload figures (batch observable callback). */
  observe(result: BatchObservableResult, s: OverloadStats): void {
    result.observe(this.outstanding, s.outstanding);
    result.observe(this.pending, s.pending);
    result.observe(this.shedding, s.shedding ? 1 : 0);
    result.observe(this.episodes, s.sheddingEpisodes);
    result.observe(this.delay, s.runQueueDelayMs / 1000);
    for (const [limit, a] of this.limitAttrs) result.observe(this.refusals, s.refused[limit], a);
    result.observe(this.heldBack, s.heldBack);
    for (const [stage, a] of this.stageAttrs) result.observe(this.drops, s.drops[stage], a);
    result.observe(this.retries, s.retries.spent, this.spent);
    result.observe(this.retries, s.retries.refusedByBudget, this.refusedByBudget);
  }
}

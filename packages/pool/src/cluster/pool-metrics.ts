import type { BatchObservableResult, Meter, Observable } from '@opentelemetry/api';

/** What the pool metrics read of one pool client. */
export interface PoolCounters {
  readonly name: string;
  /**
   * Calls answered by a worker (errors of grain code included; not a worker thread that crashed,
   * was stopped at the deadline or closed under the call: those are failed).
   */
  readonly ok: number;
  /** Calls that failed otherwise (placement, transport, deadline, a worker thread lost). */
  readonly failed: number;
  /** Calls refused at once: every worker had maxInFlight calls outstanding. */
  readonly saturated: number;
  /** Calls outstanding now. */
  inFlight(): number;
}

interface Instruments {
  readonly calls: Observable;
  readonly inFlight: Observable;
  readonly clients: Set<PoolCounters>;
}

/** One set of instruments per meter (a member's), shared by its pool clients. */
const byMeter = new WeakMap<Meter, Instruments>();

/**
 * Reports a pool client's counters on `meter` (the member's: `cluster.meter`) as
 * `granary.pool.calls` (by outcome) and `granary.pool.in_flight` (docs/metrics.md). Returns a
 * function that stops reporting it.
 */
export function observePool(meter: Meter, client: PoolCounters): () => void {
  let i = byMeter.get(meter);
  if (i === undefined) {
    const created: Instruments = {
      calls: meter.createObservableCounter('granary.pool.calls', {
        unit: '{call}',
        description: 'Calls of a cluster pool client, by outcome (ok, failed, saturated)',
      }),
      inFlight: meter.createObservableGauge('granary.pool.in_flight', {
        unit: '{call}',
        description: 'Calls of a cluster pool client outstanding now',
      }),
      clients: new Set(),
    };
    meter.addBatchObservableCallback(
      (result) => observe(created, result),
      [created.calls, created.inFlight],
    );
    byMeter.set(meter, (i = created));
  }
  const instruments = i;
  instruments.clients.add(client);
  return () => instruments.clients.delete(client);
}

function observe(i: Instruments, result: BatchObservableResult): void {
  for (const c of i.clients) {
    const pool = { 'granary.pool.name': c.name };
    result.observe(i.calls, c.ok, { ...pool, 'granary.outcome': 'ok' });
    result.observe(i.calls, c.failed, { ...pool, 'granary.outcome': 'failed' });
    result.observe(i.calls, c.saturated, { ...pool, 'granary.outcome': 'saturated' });
    result.observe(i.inFlight, c.inFlight(), pool);
  }
}

import { percentileOf } from './fixtures/latency-histogram';
import { delta } from './fixtures/overload-counters';
import {
  formatPhase,
  merge,
  recoveryOf,
  type PhaseReport,
  type RecoveryReport,
} from './fixtures/overload-figures';
import type { MemoryFigures } from './fixtures/overload-protocol';
import { CHEAP_KIND, WORK_KIND } from './fixtures/overload-protocol';
import { coresBetween, sampleNodes, sleep, snapshot, startWorld } from './fixtures/overload-world';

export { formatPhase, type PhaseReport, type RecoveryReport } from './fixtures/overload-figures';

/** One scenario of issue 26's overload benchmark. */
export interface OverloadRunOptions {
  /** 'node-bound': one node with a fixed CPU cost per turn; 'caller-bound': one calling process. */
  scenario: 'node-bound' | 'caller-bound';
  nodes: number;
  /** Load-generator processes (each a client member). */
  generators: number;
  /** CPU per turn of the called kind, µs (0: the cheap kind). */
  turnUs: number;
  grains: number;
  /** Deadline of every call. */
  timeoutMs: number;
  /** Closed-loop calls in flight per generator while capacity is measured. */
  capacityInFlight: number;
  capacityMs: number;
  /** Offered load of each phase, as multiples of the measured capacity. */
  multiples: number[];
  phaseMs: number;
  /** Overload then light load in one phase, for the recovery figure (undefined: skipped). */
  recovery:
    { multiple: number; overMs: number; afterMultiple: number; afterMs: number } | undefined;
  /** Latency window of the recovery phase. */
  windowMs: number;
  /**
   * The generators ask Cluster.canCall before each call and shed the calls it refuses, as
   * docs/overload.md tells a server offered more than it can call (caller-bound).
   */
  shed?: boolean;
  /** Extra Cluster.start options of the nodes and of the generators. */
  nodeOptions?: Record<string, unknown>;
  loadOptions?: Record<string, unknown>;
  log(line: string): void;
}

export interface OverloadReport {
  scenario: OverloadRunOptions['scenario'];
  /** Closed-loop goodput, calls/s. */
  capacity: number;
  idle: { nodes: MemoryFigures[]; generators: MemoryFigures[] };
  phases: PhaseReport[];
  recovery: RecoveryReport | undefined;
}

/** The defaults of the two scenarios (the benchmark's; the npm test runs a shorter node-bound). */
export const OVERLOAD_DEFAULTS: Record<
  OverloadRunOptions['scenario'],
  Omit<OverloadRunOptions, 'log'>
> = {
  'node-bound': {
    scenario: 'node-bound',
    nodes: 1,
    generators: 2,
    turnUs: 50,
    grains: 100,
    timeoutMs: 1000,
    capacityInFlight: 100,
    capacityMs: 3000,
    multiples: [0.5, 0.9, 1, 1.5, 2, 4],
    phaseMs: 5000,
    recovery: { multiple: 4, overMs: 5000, afterMultiple: 0.5, afterMs: 5000 },
    windowMs: 250,
  },
  'caller-bound': {
    scenario: 'caller-bound',
    nodes: 2,
    generators: 1,
    turnUs: 0,
    grains: 100,
    timeoutMs: 1000,
    capacityInFlight: 1000,
    capacityMs: 3000,
    multiples: [0.5, 0.9, 1, 1.5, 2, 4],
    phaseMs: 5000,
    recovery: { multiple: 4, overMs: 5000, afterMultiple: 0.5, afterMs: 5000 },
    windowMs: 250,
    shed: true,
  },
};

/**
 * Runs one overload scenario: starts etcd, the nodes and the generators, measures capacity with a
 * closed loop, then offers each multiple of it open loop, then (optionally) overload followed by
 * light load for the recovery figure. Always tears down.
 */
export async function runOverload(o: OverloadRunOptions): Promise<OverloadReport> {
  const w = await startWorld(o);
  const kind = o.turnUs > 0 ? WORK_KIND : CHEAP_KIND;
  const call = { kind, grains: o.grains, timeoutMs: o.timeoutMs };
  const shed = o.shed === true;
  const waitMs = (ms: number): number => ms + o.timeoutMs + 60_000;
  try {
    const every = (c: Record<string, unknown>): Array<Record<string, unknown>> =>
      w.generators.map(() => c);
    // Warm-up (activations, JIT), then capacity.
    await w.phase(
      every({ cmd: 'closed', inFlight: o.capacityInFlight, durationMs: 1000, ...call }),
      waitMs(1000),
    );
    const cap = merge(
      await w.phase(
        every({ cmd: 'closed', inFlight: o.capacityInFlight, durationMs: o.capacityMs, ...call }),
        waitMs(o.capacityMs),
      ),
    );
    const capacity = cap.ok / cap.seconds;
    o.log(`${o.scenario}: capacity ${Math.round(capacity)} calls/s (closed loop)`);
    await sleep(1000);
    const idle = {
      nodes: (await Promise.all(w.nodes.map((n) => w.stats(n)))).map((s) => s.memory),
      generators: (await Promise.all(w.generators.map((g) => w.stats(g)))).map((s) => s.memory),
    };
    const phases: PhaseReport[] = [];
    let baseline: number[] | undefined;
    for (const multiple of o.multiples) {
      const rate = (multiple * capacity) / o.generators;
      const before = await snapshot(w);
      const sampler = sampleNodes(w);
      const outcomes = await w.phase(
        every({
          cmd: 'phase',
          steps: [{ rate, durationMs: o.phaseMs }],
          windowMs: 0,
          shed,
          ...call,
        }),
        waitMs(o.phaseMs),
      );
      const nodes = await sampler.stop();
      const after = await snapshot(w);
      const m = merge(outcomes);
      const report: PhaseReport = {
        multiple,
        offered: (m.started / o.phaseMs) * 1000,
        expiredBeforeStart: m.expiredBeforeStart,
        shedBeforeStart: m.shedBeforeStart,
        goodput: m.ok / (o.phaseMs / 1000),
        p50: percentileOf(m.histogram, 50),
        p99: percentileOf(m.histogram, 99),
        errors: m.errors,
        overloaded: m.overloaded,
        counters: delta(after.counters, before.counters),
        cpu: coresBetween(before, after),
        nodes,
        generators: outcomes.map((p) => p.peak),
      };
      if (multiple <= 0.5 && baseline === undefined) baseline = m.histogram;
      phases.push(report);
      o.log(formatPhase(report, capacity));
      await sleep(1000);
    }
    let recovery: RecoveryReport | undefined;
    if (o.recovery !== undefined) {
      const r = o.recovery;
      const outcomes = await w.phase(
        every({
          cmd: 'phase',
          steps: [
            { rate: (r.multiple * capacity) / o.generators, durationMs: r.overMs },
            { rate: (r.afterMultiple * capacity) / o.generators, durationMs: r.afterMs },
          ],
          windowMs: o.windowMs,
          shed,
          ...call,
        }),
        waitMs(r.overMs + r.afterMs),
      );
      const offeredPerWindow = (r.afterMultiple * capacity * o.windowMs) / 1000;
      recovery = recoveryOf(outcomes, baseline, o.windowMs, r.overMs, offeredPerWindow);
      o.log(
        `recovery: baseline p99 ${recovery.baselineP99.toFixed(1)} ms, back under ` +
          `${recovery.threshold.toFixed(1)} ms ${recovery.recoveredAfterMs} ms after the overload stopped, ` +
          `goodput >= 95% of offered ${recovery.goodputRecoveredAfterMs} ms after`,
      );
    }
    return { scenario: o.scenario, capacity, idle, phases, recovery };
  } finally {
    await w.stop();
  }
}

import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { NodeProcess, startEtcd, type EtcdHandle } from '@granary/testkit';
import { addHistogram, countOf, emptyHistogram, percentileOf } from './fixtures/latency-histogram';
import type { MemoryFigures, PhaseOutcome, StatsLine } from './fixtures/overload-protocol';
import { CHEAP_KIND, WORK_KIND } from './fixtures/overload-protocol';

const NODE_SCRIPT = path.join(__dirname, 'fixtures/overload-node.js');
const LOAD_SCRIPT = path.join(__dirname, 'fixtures/overload-load.js');
/** How often the run samples the nodes' memory during a phase. */
const NODE_SAMPLE_MS = 200;

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

/** What one phase measured over every generator and node. */
export interface PhaseReport {
  multiple: number;
  /** Calls offered (fallen due) per second. */
  offered: number;
  /**
   * Calls that waited out their deadline in a generator that fell behind, before it could start
   * them (counted in `errors` as ERR_DEADLINE_EXCEEDED too).
   */
  expiredBeforeStart: number;
  /** Calls the generators shed at the source (Cluster.canCall was false; also in `errors`). */
  shedBeforeStart: number;
  /** Successful calls per second. */
  goodput: number;
  p50: number;
  p99: number;
  /** Failed calls by code, summed over the generators. */
  errors: Record<string, number>;
  /** OverloadedError by limit. */
  overloaded: Record<string, number>;
  /** Counter increases during the phase, summed over every member (callers and nodes). */
  counters: Record<string, number>;
  /** CPU each process used during the phase, in cores (1: one core all the time). */
  cpu: { nodes: number[]; generators: number[] };
  /** Peak memory during the phase, per process. */
  nodes: MemoryFigures[];
  generators: MemoryFigures[];
}

/** The recovery figures: latency and goodput per window after the overload stopped. */
export interface RecoveryReport {
  /** p99 of the light-load phase before any overload (ms). */
  baselineP99: number;
  /** What counts as back to baseline: max(2 x baseline, baseline + 5 ms). */
  threshold: number;
  /** ms after the overload stopped, p99 and successes of the calls that fell due in that window. */
  windows: Array<{ atMs: number; p99: number; ok: number }>;
  /**
   * ms after the overload stopped from which on the calls' p99 (all of them, to the end of the
   * light load) is under the threshold. Taken over the rest of the phase, not per window: a
   * 250 ms window holds a few hundred calls, and its p99 is their slowest few, as noisy at
   * baseline as after it.
   */
  recoveredAfterMs: number;
  /** ms after the overload stopped from which every window answers >= 95% of what it offers. */
  goodputRecoveredAfterMs: number;
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

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The processes of one run and how to talk to them. */
class World {
  private seq = 0;

  constructor(
    readonly etcd: EtcdHandle,
    readonly nodes: NodeProcess[],
    readonly generators: NodeProcess[],
  ) {}

  /** Asks one process for its stats. */
  async stats(p: NodeProcess): Promise<StatsLine> {
    const id = `s${++this.seq}`;
    const mark = p.lines.length;
    p.send({ cmd: 'stats', id });
    const line = await p.waitFor((l) => l.type === 'stats' && l.id === id, 30_000, mark);
    return line.data as unknown as StatsLine;
  }

  /** Sends each generator its command and waits for every `phase` line. */
  async phase(commands: Array<Record<string, unknown>>, waitMs: number): Promise<PhaseOutcome[]> {
    const id = `p${++this.seq}`;
    const marks = this.generators.map((g) => g.lines.length);
    this.generators.forEach((g, i) => g.send({ ...commands[i], id }));
    return Promise.all(
      this.generators.map(
        async (g, i) =>
          (await g.waitFor((l) => l.type === 'phase' && l.id === id, waitMs, marks[i]))
            .data as unknown as PhaseOutcome,
      ),
    );
  }

  async stop(): Promise<void> {
    await Promise.all(
      [...this.generators, ...this.nodes].map(async (p) => {
        p.send({ cmd: 'stop' });
        const timer = setTimeout(() => void p.kill(), 5000);
        await p.exited;
        clearTimeout(timer);
      }),
    );
    await this.etcd.stop();
  }
}

async function startWorld(o: OverloadRunOptions): Promise<World> {
  const etcd = await startEtcd();
  const cluster = `overload-${process.pid}`;
  const nodes: NodeProcess[] = [];
  const generators: NodeProcess[] = [];
  const world = new World(etcd, nodes, generators);
  try {
    for (let i = 0; i < o.nodes; i++) {
      const config = {
        etcdEndpoints: etcd.endpoints,
        id: `node-${i}`,
        cluster,
        turnUs: o.turnUs,
        options: o.nodeOptions,
      };
      nodes.push(NodeProcess.spawn({ script: NODE_SCRIPT, config, label: config.id }));
    }
    await Promise.all(nodes.map((n) => n.waitFor((l) => l.type === 'ready', 30_000)));
    for (let i = 0; i < o.generators; i++) {
      const config = {
        etcdEndpoints: etcd.endpoints,
        id: `load-${i}`,
        cluster,
        options: o.loadOptions,
      };
      generators.push(NodeProcess.spawn({ script: LOAD_SCRIPT, config, label: config.id }));
    }
    await Promise.all(generators.map((g) => g.waitFor((l) => l.type === 'ready', 30_000)));
    return world;
  } catch (err) {
    await world.stop().catch(() => undefined);
    throw err;
  }
}

/** Numeric leaves of a nested counters object, flattened as `a.b.c`. */
function flatten(
  o: unknown,
  prefix = '',
  into: Record<string, number> = {},
): Record<string, number> {
  if (o === null || typeof o !== 'object') return into;
  for (const [k, v] of Object.entries(o as Record<string, unknown>)) {
    const key = prefix === '' ? k : `${prefix}.${k}`;
    if (typeof v === 'number') into[key] = (into[key] ?? 0) + v;
    else flatten(v, key, into);
  }
  return into;
}

function delta(
  after: Record<string, number>,
  before: Record<string, number>,
): Record<string, number> {
  const d: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) {
    const x = v - (before[k] ?? 0);
    if (x !== 0) d[k] = x;
  }
  return d;
}

function sum(into: Record<string, number>, from: Record<string, number>): void {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
}

/** Every member's counters summed (nodes and generators), and each process's CPU time. */
async function snapshot(w: World): Promise<{
  counters: Record<string, number>;
  cpuMs: { nodes: number[]; generators: number[] };
  at: number;
}> {
  const counters: Record<string, number> = {};
  const cpuMs = { nodes: [] as number[], generators: [] as number[] };
  for (const who of ['nodes', 'generators'] as const) {
    for (const p of w[who]) {
      const s = await w.stats(p);
      sum(counters, flatten(s.overload));
      cpuMs[who].push(s.cpuMs);
    }
  }
  return { counters, cpuMs, at: performance.now() };
}

/** CPU used between two snapshots, in cores. */
function coresBetween(
  before: Awaited<ReturnType<typeof snapshot>>,
  after: Awaited<ReturnType<typeof snapshot>>,
): { nodes: number[]; generators: number[] } {
  const ms = after.at - before.at;
  const of = (who: 'nodes' | 'generators'): number[] =>
    after.cpuMs[who].map((c, i) => Math.round(((c - before.cpuMs[who][i]!) / ms) * 100) / 100);
  return { nodes: of('nodes'), generators: of('generators') };
}

/** Samples the nodes' memory until stopped; resolves with each node's peak. */
function sampleNodes(w: World): { stop(): Promise<MemoryFigures[]> } {
  const peaks = w.nodes.map(() => ({ rss: 0, heapUsed: 0 }));
  let running = true;
  const loop = (async () => {
    while (running) {
      const lines = await Promise.all(w.nodes.map((n) => w.stats(n)));
      lines.forEach((l, i) => {
        peaks[i]!.rss = Math.max(peaks[i]!.rss, l.memory.rss);
        peaks[i]!.heapUsed = Math.max(peaks[i]!.heapUsed, l.memory.heapUsed);
      });
      await sleep(NODE_SAMPLE_MS);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return peaks;
    },
  };
}

function merge(outcomes: PhaseOutcome[]): {
  ok: number;
  started: number;
  expiredBeforeStart: number;
  shedBeforeStart: number;
  seconds: number;
  histogram: number[];
  errors: Record<string, number>;
  overloaded: Record<string, number>;
} {
  const histogram = emptyHistogram();
  const errors: Record<string, number> = {};
  const overloaded: Record<string, number> = {};
  let ok = 0;
  let started = 0;
  let expiredBeforeStart = 0;
  let shedBeforeStart = 0;
  let seconds = 0;
  for (const p of outcomes) {
    addHistogram(histogram, p.histogram);
    sum(errors, p.errors);
    sum(overloaded, p.overloaded);
    ok += p.ok;
    started += p.started;
    expiredBeforeStart += p.expiredBeforeStart;
    shedBeforeStart += p.shedBeforeStart ?? 0;
    seconds = Math.max(seconds, p.seconds);
  }
  return {
    ok,
    started,
    expiredBeforeStart,
    shedBeforeStart,
    seconds,
    histogram,
    errors,
    overloaded,
  };
}

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

function recoveryOf(
  outcomes: PhaseOutcome[],
  baseline: number[] | undefined,
  windowMs: number,
  overMs: number,
  offeredPerWindow: number,
): RecoveryReport {
  const baselineP99 = baseline === undefined ? NaN : percentileOf(baseline, 99);
  const threshold = Math.max(2 * baselineP99, baselineP99 + 5);
  const count = Math.max(...outcomes.map((p) => p.windows.length));
  const after: number[][] = [];
  for (let i = 0; i < count; i++) {
    const h = emptyHistogram();
    for (const p of outcomes) if (p.windows[i] !== undefined) addHistogram(h, p.windows[i]!);
    if (i * windowMs >= overMs) after.push(h);
  }
  const windows = after.map((h, i) => ({
    atMs: i * windowMs,
    p99: percentileOf(h, 99),
    ok: countOf(h),
  }));
  // The last window may be cut short by the end of the phase: left out of the goodput figure.
  let recoveredAfterMs = 0;
  let goodputRecoveredAfterMs = 0;
  const rest = emptyHistogram();
  for (let i = after.length - 1; i >= 0; i--) {
    addHistogram(rest, after[i]!);
    if (!(percentileOf(rest, 99) <= threshold) && recoveredAfterMs === 0)
      recoveredAfterMs = (i + 1) * windowMs;
    if (
      i < after.length - 1 &&
      windows[i]!.ok < 0.95 * offeredPerWindow &&
      goodputRecoveredAfterMs === 0
    )
      goodputRecoveredAfterMs = (i + 1) * windowMs;
  }
  return { baselineP99, threshold, windows, recoveredAfterMs, goodputRecoveredAfterMs };
}

const MiB = 1024 * 1024;

/** One line per phase for the log. */
export function formatPhase(p: PhaseReport, capacity: number): string {
  const mem = (m: MemoryFigures[], f: keyof MemoryFigures): string =>
    m.map((x) => (x[f] / MiB).toFixed(0)).join('/');
  const errors = Object.entries(p.errors)
    .map(([k, v]) => `${k.replace(/^ERR_/, '')}=${v}`)
    .join(' ');
  const counters = Object.entries(p.counters)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  return (
    `x${p.multiple}: offered ${Math.round(p.offered)}/s, goodput ${Math.round(p.goodput)}/s ` +
    `(${(p.goodput / capacity).toFixed(2)} of capacity), p50 ${p.p50.toFixed(1)} ms, p99 ${p.p99.toFixed(1)} ms; ` +
    `errors ${errors || 'none'}` +
    (p.expiredBeforeStart > 0
      ? ` (${p.expiredBeforeStart} expired before the generator started them)`
      : '') +
    (p.shedBeforeStart > 0 ? ` (${p.shedBeforeStart} shed by the generator: canCall false)` : '') +
    `; cpu node ${p.cpu.nodes.join('/')} load ${p.cpu.generators.join('/')} cores` +
    `; node rss ${mem(p.nodes, 'rss')} MiB; load heap ${mem(p.generators, 'heapUsed')} MiB` +
    (counters ? `; ${counters}` : '')
  );
}

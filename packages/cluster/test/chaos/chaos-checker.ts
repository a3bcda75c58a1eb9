import type { ActivationEvent } from '../../src/grains/grains-options';
import { overlaps } from '../grains/activation-overlaps';
import type { CounterState, LoadOutcome, WriteRecord } from './fixtures/chaos-protocol';

/** A fault as the schedule ran it. */
export interface FaultRecord {
  name: string;
  /** Epoch ms when it was injected. */
  at: number;
}

/** Everything the chaos run logged, for the checker. */
export interface ChaosLogs {
  /** Every JSON line of every node process (all incarnations), with the node's id. */
  nodeLines: ReadonlyArray<Record<string, unknown>>;
  /** When a node process was SIGKILLed (its activations end there). */
  downs: ReadonlyArray<{ node: string; at: number }>;
  writes: readonly WriteRecord[];
  load: LoadOutcome;
  /** Each counter's stored state at the end (undefined: nothing stored). */
  finalStates: ReadonlyMap<string, CounterState | undefined>;
  faults: readonly FaultRecord[];
  /** The load's measured span, epoch ms: from the first full second to the stop. */
  from: number;
  to: number;
}

/** One 1 s window of the load. */
export interface Window {
  /** Seconds since `from`. */
  second: number;
  ok: number;
  failed: number;
  /** ok / (ok + failed); 0 for a second in which no call settled. */
  availability: number;
  /** The slowest call that settled in this second, ms. */
  slowestMs: number;
}

/** What the checker found. */
export interface ChaosReport {
  calls: number;
  ok: number;
  errors: Record<string, number>;
  overlaps: string[];
  lostAcknowledged: number;
  lostSamples: string[];
  appliedTwice: number;
  twiceSamples: string[];
  fencedWritesAccepted: number;
  fencedSamples: string[];
  late: number;
  lateSamples: string[];
  windows: Window[];
  minAvailability: number;
  /**
   * Per fault: ms from injection to the end of the last window before the next fault that was
   * below 0.99 or had a call slower than SLOW_MS, the lowest availability, and the slowest call
   * that settled meanwhile.
   */
  recovery: Array<{
    fault: string;
    at: number;
    recoveryMs: number;
    minAvailability: number;
    slowestMs: number;
    /** Members that lost their lease (fenced themselves) meanwhile, one entry per loss. */
    fenced: string[];
    /** The windows that were not recovered, each with its failures and slowest call. */
    bad: string[];
  }>;
}

/** A window at or above this is "available"; recovery ends with the last one below. */
export const AVAILABLE = 0.99;
/**
 * A window in which a call took longer than this to settle is not recovered either: calls that
 * waited out a failover succeed late, and the time until they have is part of the outage.
 */
export const SLOW_MS = 1000;
const SAMPLES = 10;

/**
 * Activations clipped at the moment their member stopped being able to serve: its own
 * `lease lost` line, its SIGKILL, or the first view of another member without it (its lease had
 * expired in etcd). Overlaps after that are a fenced member's and are not counted.
 */
function clippedActivations(logs: ChaosLogs): ActivationEvent[] {
  const fencedAt = new Map<string, number[]>();
  const add = (node: string, at: number): void => {
    let list = fencedAt.get(node);
    if (list === undefined) fencedAt.set(node, (list = []));
    list.push(at);
  };
  const views: Array<{ node: string; at: number; members: Set<string> }> = [];
  for (const l of logs.nodeLines) {
    if (l.type === 'lease' && l.state === 'lost') add(l.node as string, l.at as number);
    if (l.type === 'topology') {
      views.push({
        node: l.node as string,
        at: l.at as number,
        members: new Set(l.members as string[]),
      });
    }
  }
  for (const d of logs.downs) add(d.node, d.at);
  const nodes = new Set(logs.nodeLines.map((l) => l.node as string));
  for (const v of views) for (const n of nodes) if (n !== v.node && !v.members.has(n)) add(n, v.at);
  for (const list of fencedAt.values()) list.sort((a, b) => a - b);

  const events: ActivationEvent[] = [];
  const ends = new Map<string, ActivationEvent>();
  for (const l of logs.nodeLines) {
    if (l.type !== 'act') continue;
    const e = { ...(l as unknown as ActivationEvent), type: l.event as 'activate' | 'deactivate' };
    if (e.type === 'activate') events.push(e);
    else ends.set(e.activationId, e);
  }
  const out: ActivationEvent[] = [];
  for (const a of events) {
    const end = ends.get(a.activationId);
    const fence = fencedAt.get(a.member)?.find((t) => t > a.at);
    const to = Math.min(end?.at ?? Infinity, fence ?? Infinity);
    out.push(a);
    if (Number.isFinite(to)) out.push({ ...a, type: 'deactivate', at: to });
  }
  return out;
}

/** Acknowledged ops missing from the final state, per caller and grain. */
function lost(logs: ChaosLogs): { count: number; samples: string[] } {
  const acked = new Map<string, number[]>();
  for (const [c, s, g, ok] of logs.load.ops) {
    if (ok !== 1) continue;
    const key = `${g} ${c}`;
    let list = acked.get(key);
    if (list === undefined) acked.set(key, (list = []));
    list.push(s);
  }
  let count = 0;
  const samples: string[] = [];
  for (const [key, seqs] of acked) {
    const [g, c] = key.split(' ') as [string, string];
    const st = logs.finalStates.get(g);
    const applied = st?.count[c] ?? 0;
    const last = st?.last[c] ?? 0;
    const missing = Math.max(seqs.length - applied, seqs.filter((s) => s > last).length);
    if (missing > 0) {
      count += missing;
      if (samples.length < SAMPLES) {
        samples.push(
          `${g}: ${missing} of caller ${c}'s ${seqs.length} acknowledged ops missing (stored count ${applied}, last ${last})`,
        );
      }
    }
  }
  return { count, samples };
}

/** Ops applied in two accepted writes, and stored counts above the ops attempted. */
function twice(logs: ChaosLogs): { count: number; samples: string[] } {
  const versions = new Map<string, Set<number>>();
  for (const w of logs.writes) {
    const key = `${w.g} ${w.c}/${w.s}`;
    let set = versions.get(key);
    if (set === undefined) versions.set(key, (set = new Set()));
    set.add(w.v);
  }
  const samples: string[] = [];
  let fromLog = 0;
  for (const [key, set] of versions) {
    if (set.size < 2) continue;
    fromLog += set.size - 1;
    if (samples.length < SAMPLES) samples.push(`${key} applied in versions ${[...set].join(', ')}`);
  }
  const attempted = new Map<string, number>();
  for (const [c, , g] of logs.load.ops)
    attempted.set(`${g} ${c}`, (attempted.get(`${g} ${c}`) ?? 0) + 1);
  let fromState = 0;
  for (const [g, st] of logs.finalStates) {
    for (const [c, n] of Object.entries(st?.count ?? {})) {
      const excess = n - (attempted.get(`${g} ${c}`) ?? 0);
      if (excess > 0) {
        fromState += excess;
        if (samples.length < SAMPLES)
          samples.push(`${g}: caller ${c} has ${n} applied, more than it attempted`);
      }
    }
  }
  return { count: Math.max(fromLog, fromState), samples };
}

/** Accepted writes whose epoch is older than one the grain already had stored: a fenced writer. */
function fencedWrites(logs: ChaosLogs): { count: number; samples: string[] } {
  const byGrain = new Map<string, WriteRecord[]>();
  for (const w of logs.writes) {
    let list = byGrain.get(w.g);
    if (list === undefined) byGrain.set(w.g, (list = []));
    list.push(w);
  }
  let count = 0;
  const samples: string[] = [];
  for (const [g, list] of byGrain) {
    list.sort((a, b) => a.v - b.v || a.at - b.at);
    let newest: WriteRecord | undefined;
    for (const w of list) {
      if (newest !== undefined && w.e < newest.e) {
        count++;
        if (samples.length < SAMPLES) {
          samples.push(
            `${g} v${w.v} by ${w.a} on ${w.node} (epoch ${w.e}) accepted after v${newest.v} under epoch ${newest.e}`,
          );
        }
      }
      if (newest === undefined || w.e >= newest.e) newest = w;
    }
  }
  return { count, samples };
}

/** One window that was not recovered, as a stuck fault's message lists it. */
function describeWindow(w: Window, d: LoadOutcome['details'][number] | undefined): string {
  const errors = Object.entries(d?.errors ?? {})
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  return `${w.second} s: availability ${w.availability.toFixed(3)} (ok ${w.ok}, failed ${w.failed}${errors ? `: ${errors}` : ''}), slowest ${w.slowestMs} ms${d?.slowest ? ` (${d.slowest})` : ''}`;
}

function windowsOf(logs: ChaosLogs): Window[] {
  const bySecond = new Map(
    logs.load.windows.map(([s, ok, failed, slowestMs]) => [s, { ok, failed, slowestMs }]),
  );
  const first = Math.ceil(logs.from / 1000);
  const last = Math.floor(logs.to / 1000); // exclusive: the stop's second is partial
  const out: Window[] = [];
  for (let s = first; s < last; s++) {
    const w = bySecond.get(s) ?? { ok: 0, failed: 0, slowestMs: 0 };
    const settled = w.ok + w.failed;
    out.push({
      second: s - first,
      ok: w.ok,
      failed: w.failed,
      availability: settled === 0 ? 0 : w.ok / settled,
      slowestMs: w.slowestMs,
    });
  }
  return out;
}

/** Checks the logs of a chaos run against the safety properties and measures availability. */
export function checkChaos(logs: ChaosLogs): ChaosReport {
  const windows = windowsOf(logs);
  const first = Math.ceil(logs.from / 1000) * 1000;
  const faults = [...logs.faults].sort((a, b) => a.at - b.at);
  const recovery = faults.map((f, i) => {
    const until = faults[i + 1]?.at ?? logs.to;
    // A window belongs to the last fault injected before it ended.
    const mine = windows.filter((w) => {
      const end = first + (w.second + 1) * 1000;
      return end > f.at && end <= until;
    });
    const bad = mine.filter((w) => w.availability < AVAILABLE || w.slowestMs > SLOW_MS);
    const lastBad = bad[bad.length - 1];
    return {
      fault: f.name,
      at: f.at,
      recoveryMs:
        lastBad === undefined ? 0 : Math.max(0, first + (lastBad.second + 1) * 1000 - f.at),
      minAvailability: Math.min(1, ...mine.map((w) => w.availability)),
      slowestMs: Math.max(0, ...mine.map((w) => w.slowestMs)),
      bad: bad.map((w) => describeWindow(w, logs.load.details?.[first / 1000 + w.second])),
      fenced: logs.nodeLines
        .filter(
          (l) =>
            l.type === 'lease' &&
            l.state === 'lost' &&
            (l.at as number) >= f.at &&
            (l.at as number) < until,
        )
        .map((l) => l.node as string),
    };
  });
  const l = lost(logs);
  const t = twice(logs);
  const f = fencedWrites(logs);
  return {
    calls: logs.load.calls,
    ok: logs.load.ok,
    errors: logs.load.errors,
    overlaps: overlaps(clippedActivations(logs)),
    lostAcknowledged: l.count,
    lostSamples: l.samples,
    appliedTwice: t.count,
    twiceSamples: t.samples,
    fencedWritesAccepted: f.count,
    fencedSamples: f.samples,
    late: logs.load.late,
    lateSamples: logs.load.lateSamples,
    windows,
    minAvailability: Math.min(1, ...windows.map((w) => w.availability)),
    recovery,
  };
}

import type { NodeProcess } from '@granary/testkit';
import {
  AVAILABLE,
  SLOW_MS,
  checkChaos,
  type ChaosReport,
  type FaultRecord,
} from './chaos-checker';
import { ChaosCluster } from './chaos-cluster';
import { FAULTS, type Fault } from './chaos-faults';

/** Sizes and pacing of a chaos run. */
export interface ChaosRunOptions {
  nodes: number;
  callers: number;
  grains: number;
  grainsPerCaller: number;
  shardCount: number;
  /** Deadline of each call. */
  timeoutMs: number;
  /** Calls per op at most (the same op id each time). */
  attempts: number;
  /** Pause between a caller's ops. */
  pauseMs: number;
  /** Load before the first fault, and after each fault's action before the next. */
  settleMs: number;
  /**
   * After `settleMs`, how much longer the run waits for the load to be clean (see `recovered`)
   * before it injects the next fault anyway. A fault that needs it shows in its recovery time.
   */
  maxExtraSettleMs: number;
  /**
   * Load after the last fault (the partition): a member cut off past its TTL rejoins after the
   * heal, and calls to it stall until its links recover (see the cluster README's chaos test).
   */
  finalSettleMs: number;
  /** Progress lines (the test prints them). */
  log(line: string): void;
  /** The faults to inject, in order (default: all of FAULTS; a study of one fault runs one). */
  faults?: readonly Fault[];
}

/** The defaults the chaos test runs with (issue 17: 4 nodes, >= 100 callers). */
export const CHAOS_DEFAULTS: Omit<ChaosRunOptions, 'log'> = {
  nodes: 4,
  callers: 100,
  grains: 100,
  grainsPerCaller: 4,
  shardCount: 32,
  timeoutMs: 5000,
  attempts: 3,
  pauseMs: 20,
  settleMs: 6000,
  maxExtraSettleMs: 6000,
  finalSettleMs: 20_000,
};

/** What a chaos run returns: the checker's report, the faults run, those skipped and why. */
export interface ChaosRun {
  report: ChaosReport;
  faults: FaultRecord[];
  skipped: string[];
  seconds: number;
  /** When the load started and stopped, epoch ms. */
  from: number;
  to: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Whole seconds in a row the load must be clean before the next fault. */
const CLEAN_SECONDS = 2;

/**
 * Waits until the load's last CLEAN_SECONDS progress lines are clean by the checker's measure (a
 * window at or above AVAILABLE with no call slower than SLOW_MS, and no call in flight longer
 * than SLOW_MS), at most `maxMs`. A fixed pause between faults made the schedule, not the
 * cluster, decide whether a fault that recovers in 5.5 s rather than 2 s "recovered before the
 * next one". Returns the ms waited.
 */
async function recovered(load: NodeProcess, maxMs: number): Promise<number> {
  const from = Date.now();
  const clean = (l: Record<string, unknown>): boolean => {
    const [, ok, failed, slowestMs] = l.window as [number, number, number, number];
    return (
      ok > 0 &&
      ok / (ok + failed) >= AVAILABLE &&
      slowestMs <= SLOW_MS &&
      (l.oldestInFlightMs as number) <= SLOW_MS
    );
  };
  for (;;) {
    // The newest lines, if they are from the last CLEAN_SECONDS (+ slack for a late line).
    const since = Date.now() - CLEAN_SECONDS * 1000 - 500;
    const progress = load.lines
      .filter((l) => l.data.type === 'progress' && (l.data.at as number) >= since)
      .slice(-CLEAN_SECONDS);
    const enough = progress.length === CLEAN_SECONDS;
    if ((enough && progress.every((l) => clean(l.data))) || Date.now() - from >= maxMs) {
      return Date.now() - from;
    }
    await sleep(250);
  }
}

/**
 * Runs the chaos scenario of issue 17 once: starts the world, puts the load on, injects every
 * fault in turn (each after the cluster has settled from the last), stops the load, and checks
 * the logs. Always tears down, also when a step throws.
 */
export async function runChaos(o: ChaosRunOptions): Promise<ChaosRun> {
  const t0 = Date.now();
  const c = await ChaosCluster.start({ nodes: o.nodes, shardCount: o.shardCount });
  try {
    await c.converged();
    const load = await c.startLoad({
      callers: o.callers,
      grains: o.grains,
      grainsPerCaller: o.grainsPerCaller,
      timeoutMs: o.timeoutMs,
      attempts: o.attempts,
      pauseMs: o.pauseMs,
    });
    const from = Date.now();
    o.log(
      `load on: ${o.callers} callers, ${o.grains} counters, ${o.nodes} nodes (${c.networkSkipped === undefined ? 'each in its own network namespace' : `loopback: ${c.networkSkipped}`})`,
    );
    await sleep(o.settleMs);
    const faults: FaultRecord[] = [];
    const skipped: string[] = [];
    for (const fault of o.faults ?? FAULTS) {
      const why = fault.skip?.(c);
      if (why !== undefined) {
        skipped.push(`${fault.name}: ${why}`);
        o.log(`skipped ${fault.name}: ${why}`);
        continue;
      }
      const at = Date.now();
      faults.push({ name: fault.name, at });
      o.log(`${((at - from) / 1000).toFixed(1)} s: ${fault.name}`);
      await fault.run(c);
      o.log(`  its action over after ${((Date.now() - at) / 1000).toFixed(1)} s`);
      await sleep(o.settleMs);
      const extra = await recovered(load, o.maxExtraSettleMs);
      if (extra >= 1000) o.log(`  the load was clean again ${(extra / 1000).toFixed(1)} s later`);
      await c
        .converged()
        .catch((err: Error) => o.log(`not converged after ${fault.name}: ${err.message}`));
    }
    await sleep(o.finalSettleMs);
    const to = Date.now();
    const mark = load.lines.length;
    load.send({ cmd: 'stop' });
    await load.waitFor((l) => l.type === 'outcome', 60_000, mark);
    await load.exited;
    const report = checkChaos({
      nodeLines: c.nodeLines(),
      downs: c.downs,
      writes: c.writes(),
      load: c.loadOutcome(),
      finalStates: await c.finalStates(o.grains),
      faults,
      from,
      to,
    });
    return { report, faults, skipped, seconds: (Date.now() - t0) / 1000, from, to };
  } finally {
    await c.stop();
  }
}

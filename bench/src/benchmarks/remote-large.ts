import type { Cluster } from '@granary/cluster';
import type { TestCluster } from '@granary/testkit';
import { defineBenchmark, percentile, type BenchCase } from '../harness';
import { startPeerAndClient } from './grains-calls';

/** Closed-loop small callers, as in issue 27. */
const SMALL_CALLERS = 200;
const GRAINS = 100;
/** Unmeasured time at the start of a window (JIT, the large stream getting going). */
const WARM_MS = 400;
/** Measured time of a window. */
const WINDOW_MS = 2000;
const SIZES = [64 * 1024, 256 * 1024, 1024 * 1024];

let tc: TestCluster;
let client: Cluster;

interface Window {
  smallPerSecond: number;
  smallP50: number;
  smallP99: number;
  /** Payload bytes of large calls completed in the window (one direction), MB/s. */
  largeMBps: number;
}

/**
 * One window: `small` closed-loop callers to 100 mirror grains and/or one caller sending
 * `largeBytes` messages back to back to another mirror grain (echoed back), all to the same
 * node. Both loops run through the warm-up; only calls that start in the window count.
 */
async function measure(small: boolean, largeBytes: number | undefined): Promise<Window> {
  const latencies: number[] = [];
  let smallDone = 0;
  let largeDone = 0;
  let stop = false;
  const t0 = performance.now() + WARM_MS;
  const tEnd = t0 + WINDOW_MS;
  const smallWorker = async (w: number): Promise<void> => {
    for (let n = w; !stop; n += SMALL_CALLERS) {
      const start = performance.now();
      await client.request('mirror', `g-${n % GRAINS}`, { n }, { timeoutMs: 30_000 });
      const end = performance.now();
      if (start >= t0 && end <= tEnd) {
        latencies.push(end - start);
        smallDone++;
      }
    }
  };
  // REMOTE_LARGE_JSON=1: the large messages are JSON ({ s: a string of that size }), not bytes.
  const payload =
    largeBytes === undefined
      ? undefined
      : process.env.REMOTE_LARGE_JSON
        ? { s: 'x'.repeat(largeBytes - 16) }
        : new Uint8Array(largeBytes).fill(7);
  const largeWorker = async (): Promise<void> => {
    for (let n = 0; !stop; n++) {
      const start = performance.now();
      await client.request('mirror', `big-${n % 4}`, payload, { timeoutMs: 30_000 });
      if (start >= t0 && performance.now() <= tEnd) largeDone++;
    }
  };
  const workers: Array<Promise<void>> = [];
  if (small) for (let w = 0; w < SMALL_CALLERS; w++) workers.push(smallWorker(w));
  if (payload) workers.push(largeWorker());
  await new Promise((r) => setTimeout(r, WARM_MS));
  await new Promise((r) => setTimeout(r, WINDOW_MS));
  stop = true;
  await Promise.all(workers);
  return {
    smallPerSecond: (smallDone * 1000) / WINDOW_MS,
    smallP50: latencies.length ? percentile(latencies, 50) : NaN,
    smallP99: latencies.length ? percentile(latencies, 99) : NaN,
    largeMBps: ((largeDone * (largeBytes ?? 0)) / 1e6) * (1000 / WINDOW_MS),
  };
}

/**
 * The cases of one scenario share its windows: the k-th run of each case reads the scenario's
 * k-th window (measured by whichever case asks first), so one window gives every metric.
 */
function scenario(small: boolean, largeBytes: number | undefined) {
  const windows: Array<Promise<Window>> = [];
  const calls = new Map<string, number>();
  return (metric: keyof Window) => async (): Promise<number> => {
    const k = calls.get(metric) ?? 0;
    calls.set(metric, k + 1);
    windows[k] ??= measure(small, largeBytes);
    return (await windows[k]!)[metric];
  };
}

function kib(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${bytes / 1024 / 1024}mib` : `${bytes / 1024}kib`;
}

function cases(): BenchCase[] {
  const alone = scenario(true, undefined);
  const out: BenchCase[] = [
    { id: 'small-alone', metric: 'calls_per_s', run: alone('smallPerSecond') },
    { id: 'small-alone-p50', metric: 'p50_ms', run: alone('smallP50') },
    { id: 'small-alone-p99', metric: 'p99_ms', run: alone('smallP99') },
  ];
  for (const size of SIZES) {
    const beside = scenario(true, size);
    const only = scenario(false, size);
    const s = kib(size);
    out.push(
      {
        id: `small-with-${s}`,
        metric: 'calls_per_s',
        baseline: 'small-alone',
        run: beside('smallPerSecond'),
      },
      {
        id: `small-with-${s}-p50`,
        metric: 'p50_ms',
        baseline: 'small-alone-p50',
        run: beside('smallP50'),
      },
      {
        id: `small-with-${s}-p99`,
        metric: 'p99_ms',
        baseline: 'small-alone-p99',
        run: beside('smallP99'),
      },
      { id: `large-${s}-alone`, metric: 'MB_per_s', run: only('largeMBps') },
      {
        id: `large-${s}-with-small`,
        metric: 'MB_per_s',
        baseline: `large-${s}-alone`,
        run: beside('largeMBps'),
      },
    );
  }
  return out;
}

export const benchmark = defineBenchmark({
  name: 'remote-large',
  description:
    'head-of-line blocking on one link: 200 closed-loop small grain calls to one node process ' +
    '(etcd membership), alone and beside one caller sending 64 KiB / 256 KiB / 1 MiB messages ' +
    'back to back to other grains on that node (echoed back): small calls/s, p50, p99, and the ' +
    'large messages MB/s (one direction), alone and beside the small calls ' +
    '(REMOTE_LARGE_JSON=1: the large messages as JSON instead of bytes)',
  repeats: 5,
  async setup() {
    ({ tc, client } = await startPeerAndClient('bench-large'));
    for (let i = 0; i < GRAINS; i++) await client.request('mirror', `g-${i}`, { n: i });
    for (let i = 0; i < 4; i++) await client.request('mirror', `big-${i}`, new Uint8Array(8));
  },
  async teardown() {
    await client.shutdown({ graceful: false });
    await tc.stop();
  },
  cases: cases(),
});

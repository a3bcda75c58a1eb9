/**
 * Drives `count` calls with `concurrency` outstanding at any time (a closed loop, like a
 * fixed pool of clients); resolves with calls/s and every call's latency in ms.
 */
export async function inFlight(
  count: number,
  concurrency: number,
  call: (n: number) => Promise<unknown>,
): Promise<{ perSecond: number; latencies: number[] }> {
  const latencies: number[] = [];
  let next = 0;
  const start = process.hrtime.bigint();
  const worker = async (): Promise<void> => {
    while (next < count) {
      const n = next++;
      const t0 = process.hrtime.bigint();
      await call(n);
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { perSecond: count / (Number(process.hrtime.bigint() - start) / 1e9), latencies };
}

/**
 * Unmeasured load at the start of a repetition, in ms. The harness's forced full GC before a
 * repetition runs while nothing is in flight: the hidden classes of the per-request objects die
 * and V8 deoptimizes the hot code that embeds them ('weak objects' in --trace-deopt, ~140
 * functions in remote request/response). The first ~0.2 s then ran de-optimized with 1,000 in
 * flight (latencies 40-80 ms), so a p99 measured that re-JIT, which a running node never sees.
 */
export const REWARM_MS = 300;

/**
 * Work a benchmark does around each call of {@link inFlightWarm} (the SDK calls of telemetry
 * measured without Granary's): `begin` before the call, `end` with its result once it
 * answered, inside the loop (no promise of its own).
 */
export interface AroundCall {
  begin(n: number): unknown;
  end(handle: unknown): void;
}

/**
 * The same closed loop as {@link inFlight}, measured in its steady state: the `concurrency`
 * callers run unmeasured for REWARM_MS (hot code optimized again), then, without stopping,
 * the next `count` calls are measured: latency per call started in the window, and calls/s
 * from the window's start to the last measured call's end. Without a pause between warm-up
 * and measurement the measured calls do not start as one synchronized burst of `concurrency`
 * calls from an empty pipeline (batching keeps such a burst in lockstep waves for 100-250 ms,
 * which a loaded node that is never empty does not see).
 */
export async function inFlightWarm(
  count: number,
  concurrency: number,
  call: (n: number) => Promise<unknown>,
  around?: AroundCall,
): Promise<{ perSecond: number; latencies: number[] }> {
  const latencies: number[] = [];
  const warmUntil = performance.now() + REWARM_MS;
  let warm = true;
  let measured = 0;
  let next = 0;
  let windowStart = 0n;
  const worker = async (): Promise<void> => {
    for (;;) {
      if (warm && performance.now() >= warmUntil) {
        warm = false;
        windowStart = process.hrtime.bigint();
      }
      if (!warm && measured >= count) return;
      const counted = !warm;
      if (counted) measured++;
      const t0 = process.hrtime.bigint();
      const n = next++;
      if (around === undefined) await call(n);
      else {
        const handle = around.begin(n);
        await call(n);
        around.end(handle);
      }
      if (counted) latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = Number(process.hrtime.bigint() - windowStart) / 1e9;
  return { perSecond: count / seconds, latencies };
}

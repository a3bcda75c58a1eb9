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
 * {@link inFlight} after REWARM_MS of the same load, unmeasured, so the hot code is optimized
 * again; what is measured is unchanged (same driver, count and concurrency).
 */
export async function inFlightWarm(
  count: number,
  concurrency: number,
  call: (n: number) => Promise<unknown>,
): Promise<{ perSecond: number; latencies: number[] }> {
  const until = performance.now() + REWARM_MS;
  while (performance.now() < until) await inFlight(2 * concurrency, concurrency, call);
  return inFlight(count, concurrency, call);
}

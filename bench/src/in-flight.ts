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

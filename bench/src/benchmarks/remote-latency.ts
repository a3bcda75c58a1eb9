import { PID } from '@granary/core';
import { defineBenchmark, percentile } from '../harness';
import { ping } from '../remote/messages';
import type { RemotePair } from '../remote/peer-client';
import { rawStreamLatencies, rawUnary, startPair } from '../remote/peer-client';

/** Sequential round trips per repetition. */
const ROUND_TRIPS = 5000;

let pair: RemotePair;
let echo: PID;

async function granaryLatencies(count: number): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = process.hrtime.bigint();
    await pair.system.root.request(echo, ping(i), { timeoutMs: 10_000 });
    latencies.push(Number(process.hrtime.bigint() - start) / 1e3);
  }
  return latencies;
}

async function rawUnaryLatencies(count: number): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = process.hrtime.bigint();
    await rawUnary(pair.rawClient, i);
    latencies.push(Number(process.hrtime.bigint() - start) / 1e3);
  }
  return latencies;
}

export const benchmark = defineBenchmark({
  name: 'remote-latency',
  description:
    'one request in flight between two processes on loopback: p50 round trip, vs a raw grpc-js bidi stream and raw unary',
  async setup() {
    pair = await startPair();
    echo = new PID(pair.granary, 'echo');
    await pair.system.root.request(echo, ping(0), { timeoutMs: 10_000 });
  },
  teardown: () => pair.close(),
  cases: [
    {
      id: 'raw-grpc-stream-p50',
      metric: 'p50_us',
      run: async () => percentile(await rawStreamLatencies(pair.rawClient, ROUND_TRIPS), 50),
    },
    {
      id: 'raw-grpc-unary-p50',
      metric: 'p50_us',
      run: async () => percentile(await rawUnaryLatencies(ROUND_TRIPS), 50),
    },
    {
      id: 'granary-request-p50',
      metric: 'p50_us',
      baseline: 'raw-grpc-stream-p50',
      run: async () => percentile(await granaryLatencies(ROUND_TRIPS), 50),
    },
  ],
});

import { PID } from '@granary/core';
import { defineBenchmark, percentile } from '../harness';
import { ping } from '../remote/messages';
import type { RemotePair } from '../remote/peer-client';
import { rawUnary, startPair } from '../remote/peer-client';
import { inFlightWarm } from '../in-flight';

/** Requests per Granary repetition (~0.7 s at the 150k req/s target). */
const REQUESTS = 100_000;
/** Raw unary calls per repetition: unary is ~6k calls/s with 1,000 in flight, keep it ~2 s. */
const RAW_CALLS = 10_000;
const IN_FLIGHT = 1000;
let pair: RemotePair;
let echo: PID;

const granaryCall = (n: number): Promise<unknown> =>
  pair.system.root.request(echo, ping(n), { timeoutMs: 30_000 });
const rawCall = (n: number): Promise<unknown> => rawUnary(pair.rawClient, n);

export const benchmark = defineBenchmark({
  name: 'remote-request',
  description:
    'request/response between two processes on loopback with 1,000 in flight: req/s and p99, vs raw grpc-js unary',
  async setup() {
    pair = await startPair();
    echo = new PID(pair.granary, 'echo');
    await pair.system.root.request(echo, ping(0), { timeoutMs: 10_000 });
  },
  teardown: () => pair.close(),
  cases: [
    {
      id: 'raw-grpc-unary-inflight-1000',
      metric: 'req_per_s',
      run: async () => (await inFlightWarm(RAW_CALLS, IN_FLIGHT, rawCall)).perSecond,
    },
    {
      id: 'granary-request-inflight-1000',
      metric: 'req_per_s',
      baseline: 'raw-grpc-unary-inflight-1000',
      run: async () => (await inFlightWarm(REQUESTS, IN_FLIGHT, granaryCall)).perSecond,
    },
    {
      id: 'raw-grpc-unary-inflight-1000-p99',
      metric: 'p99_ms',
      run: async () =>
        percentile((await inFlightWarm(RAW_CALLS, IN_FLIGHT, rawCall)).latencies, 99),
    },
    {
      id: 'granary-request-inflight-1000-p99',
      metric: 'p99_ms',
      baseline: 'raw-grpc-unary-inflight-1000-p99',
      run: async () =>
        percentile((await inFlightWarm(REQUESTS, IN_FLIGHT, granaryCall)).latencies, 99),
    },
  ],
});

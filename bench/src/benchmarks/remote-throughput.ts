import { PID } from '@granary/core';
import { defineBenchmark } from '../harness';
import { ping } from '../remote/messages';
import type { RemotePair } from '../remote/peer-client';
import { nextTurn, rawOneWay, startPair } from '../remote/peer-client';

/** Messages per repetition: ~1 s at the target rate. */
const MESSAGES = 500_000;
/** Sends per event-loop turn before yielding to I/O, the same for Granary and the raw stream. */
const BURST = 10_000;
/** The raw baseline batch size. */
const RAW_BATCH = 256;

let pair: RemotePair;
let sink: PID;
let counted = 0;

/** `count` Pings from node A's root to the peer's sink; msgs/s once the sink has them all. */
async function granaryOneWay(count: number): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < count; i++) {
    pair.system.root.send(sink, ping(i));
    if (i % BURST === BURST - 1) await nextTurn();
  }
  // Same stream, in order: the answer to 'count' comes after every Ping was received.
  const total = await pair.system.root.request<number>(sink, 'count', { timeoutMs: 60_000 });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (total - counted !== count) throw new Error(`sink counted ${total - counted} of ${count}`);
  counted = total;
  return count / seconds;
}

export const benchmark = defineBenchmark({
  name: 'remote-throughput',
  description:
    'one-way A→B small protobuf messages between two processes on loopback vs a raw grpc-js bidi stream (batches of 256)',
  async setup() {
    pair = await startPair();
    sink = new PID(pair.granary, 'sink');
    counted = await pair.system.root.request<number>(sink, 'count', { timeoutMs: 10_000 });
  },
  teardown: () => pair.close(),
  cases: [
    {
      id: 'raw-grpc-bidi-batch-256',
      metric: 'msgs_per_s',
      run: () => rawOneWay(pair.rawClient, MESSAGES, RAW_BATCH, BURST),
    },
    {
      id: 'granary-send-one-way',
      metric: 'msgs_per_s',
      baseline: 'raw-grpc-bidi-batch-256',
      run: () => granaryOneWay(MESSAGES),
    },
  ],
});

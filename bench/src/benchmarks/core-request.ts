import { ActorSystem, Props, silentLogger, type PID } from '@granary/core';
import * as comedy from 'comedy';
import * as nact from 'nact';
import { defineBenchmark, LOOP_WARMUP } from '../harness';
import { handWrittenRoundTrips, handWrittenRoundTripsInFlight } from './baseline';

/** Round trips per repetition (the 100k). */
const ROUND_TRIPS = 100_000;
/** Outstanding requests in the in-flight cases (the 1,000). */
const IN_FLIGHT = 1000;
/** nact's query needs a timeout; long enough never to fire here. */
const NACT_QUERY_TIMEOUT_MS = 60_000;

function rate(count: number, start: bigint): number {
  return count / (Number(process.hrtime.bigint() - start) / 1e9);
}

/** Runs `count` calls of `call`, `inFlight` at a time; resolves with calls/s. */
async function drive(count: number, inFlight: number, call: (i: number) => Promise<unknown>) {
  let next = 0;
  const start = process.hrtime.bigint();
  const worker = async (): Promise<void> => {
    while (next < count) await call(next++);
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return rate(count, start);
}

async function granary(count: number, inFlight: number): Promise<number> {
  const system = new ActorSystem({ logger: silentLogger });
  const pid: PID = system.root.spawn(
    Props.fromFunc((ctx) => {
      if (typeof ctx.message === 'number') ctx.respond(ctx.message + 1);
    }),
  );
  await system.root.request(pid, 0);
  const result = await drive(count, inFlight, (i) => system.root.request(pid, i));
  await system.shutdown();
  return result;
}

interface NactQuery {
  sender: nact.Ref<number>;
  n: number;
}

async function nactRequests(count: number, inFlight: number): Promise<number> {
  const system = nact.start();
  const actor = nact.spawn(system, (state: number = 0, msg: NactQuery) => {
    nact.dispatch(msg.sender, msg.n + 1);
    return state;
  });
  const ask = (n: number) =>
    nact.query(actor, (sender: nact.Ref<number>) => ({ sender, n }), NACT_QUERY_TIMEOUT_MS);
  const result = await drive(count, inFlight, ask);
  nact.stop(system);
  return result;
}

async function comedyRequests(count: number, inFlight: number): Promise<number> {
  const system = comedy.createSystem({ test: true });
  const root = await system.rootActor();
  const actor = await root.createChild(
    {
      inc(n: number): number {
        return n + 1;
      },
    },
    { mode: 'in-memory' },
  );
  const result = await drive(count, inFlight, (i) => actor.sendAndReceive('inc', i));
  await system.destroy();
  return result;
}

export const benchmark = defineBenchmark({
  name: 'core-request',
  description: `request/response: ${ROUND_TRIPS} sequential and with ${IN_FLIGHT} in flight (target ≥ 0.5 × hand-written)`,
  warmup: LOOP_WARMUP,
  cases: [
    {
      id: 'hand-written-request-100k',
      metric: 'req_per_s',
      run: () => handWrittenRoundTrips(ROUND_TRIPS),
    },
    {
      id: 'granary-request-100k',
      metric: 'req_per_s',
      baseline: 'hand-written-request-100k',
      run: () => granary(ROUND_TRIPS, 1),
    },
    {
      id: 'nact-request-100k',
      peer: true,
      metric: 'req_per_s',
      baseline: 'hand-written-request-100k',
      run: () => nactRequests(ROUND_TRIPS, 1),
    },
    {
      id: 'comedy-request-100k',
      peer: true,
      metric: 'req_per_s',
      baseline: 'hand-written-request-100k',
      run: () => comedyRequests(ROUND_TRIPS, 1),
    },
    {
      id: 'hand-written-request-100k-inflight-1000',
      metric: 'req_per_s',
      run: () => handWrittenRoundTripsInFlight(ROUND_TRIPS, IN_FLIGHT),
    },
    {
      id: 'granary-request-100k-inflight-1000',
      metric: 'req_per_s',
      baseline: 'hand-written-request-100k-inflight-1000',
      run: () => granary(ROUND_TRIPS, IN_FLIGHT),
    },
    {
      id: 'nact-request-100k-inflight-1000',
      peer: true,
      metric: 'req_per_s',
      baseline: 'hand-written-request-100k-inflight-1000',
      run: () => nactRequests(ROUND_TRIPS, IN_FLIGHT),
    },
    {
      id: 'comedy-request-100k-inflight-1000',
      peer: true,
      metric: 'req_per_s',
      baseline: 'hand-written-request-100k-inflight-1000',
      run: () => comedyRequests(ROUND_TRIPS, IN_FLIGHT),
    },
  ],
});

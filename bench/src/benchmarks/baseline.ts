import { defineBenchmark } from '../harness';
import {
  HandWrittenActor,
  handWrittenRequest,
  type HandWrittenRequest,
} from '../baselines/hand-written-actor';

/** Messages per tell repetition (the 1M). */
const TELL_MESSAGES = 1_000_000;
/** Round trips per request repetition (the 100k). */
const ROUND_TRIPS = 100_000;

/** Sends `count` messages from one sender and resolves with msgs/s once all are received. */
export function handWrittenTell(count: number): Promise<number> {
  return new Promise((resolve) => {
    let received = 0;
    const start = process.hrtime.bigint();
    const actor = new HandWrittenActor<number>(() => {
      if (++received === count) {
        const seconds = Number(process.hrtime.bigint() - start) / 1e9;
        resolve(count / seconds);
      }
    });
    for (let i = 0; i < count; i++) actor.tell(i);
  });
}

/** `count` sequential request/response round trips; resolves with req/s. */
export async function handWrittenRoundTrips(count: number): Promise<number> {
  const actor = new HandWrittenActor<HandWrittenRequest<number, number>>((r) =>
    r.reply(r.message + 1),
  );
  const start = process.hrtime.bigint();
  for (let i = 0; i < count; i++) await handWrittenRequest(actor, i);
  return count / (Number(process.hrtime.bigint() - start) / 1e9);
}

/** `count` round trips with `inFlight` outstanding at a time; resolves with req/s. */
export async function handWrittenRoundTripsInFlight(
  count: number,
  inFlight: number,
): Promise<number> {
  const actor = new HandWrittenActor<HandWrittenRequest<number, number>>((r) =>
    r.reply(r.message + 1),
  );
  let next = 0;
  const start = process.hrtime.bigint();
  const worker = async (): Promise<void> => {
    while (next < count) await handWrittenRequest(actor, next++);
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return count / (Number(process.hrtime.bigint() - start) / 1e9);
}

export const benchmark = defineBenchmark({
  name: 'baseline',
  description: 'the hand-written actor every core benchmark is compared with',
  cases: [
    {
      id: 'hand-written-tell-1M',
      metric: 'msgs_per_s',
      run: () => handWrittenTell(TELL_MESSAGES),
    },
    {
      id: 'hand-written-request-100k',
      metric: 'req_per_s',
      run: () => handWrittenRoundTrips(ROUND_TRIPS),
    },
    {
      id: 'hand-written-request-100k-inflight-1000',
      metric: 'req_per_s',
      run: () => handWrittenRoundTripsInFlight(ROUND_TRIPS, 1000),
    },
  ],
});

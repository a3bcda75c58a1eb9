import { ActorSystem, Props, silentLogger } from '@granary/core';
import * as comedy from 'comedy';
import * as nact from 'nact';
import { sendNumbers } from '../send-loop';
import { defineBenchmark, LOOP_WARMUP } from '../harness';
import { handWrittenTell } from './baseline';

/** Messages per repetition (the 1M). */
const MESSAGES = 1_000_000;

function rate(count: number, start: bigint): number {
  return count / (Number(process.hrtime.bigint() - start) / 1e9);
}

/** One sender (the root context) → one actor; resolves with msgs/s once all are received. */
async function granaryTell(count: number): Promise<number> {
  const system = new ActorSystem({ logger: silentLogger });
  let received = 0;
  let start = 0n;
  let resolve!: (rate: number) => void;
  const done = new Promise<number>((r) => (resolve = r));
  const pid = system.root.spawn(
    Props.fromFunc((ctx) => {
      if (typeof ctx.message === 'number') {
        if (++received === count) resolve(rate(count, start));
      } else if (ctx.message === 'ready?') ctx.respond(true);
    }),
  );
  // The actor has started before the clock starts: only the tells are measured.
  await system.root.request(pid, 'ready?');
  start = process.hrtime.bigint();
  sendNumbers(system.root, pid, count);
  const result = await done;
  await system.shutdown();
  return result;
}

async function nactTell(count: number): Promise<number> {
  const system = nact.start();
  let received = 0;
  const result = await new Promise<number>((resolve) => {
    const actor = nact.spawn(system, (state: number = 0, _msg: number) => {
      if (++received === count) resolve(rate(count, start));
      return state + 1;
    });
    const start = process.hrtime.bigint();
    for (let i = 0; i < count; i++) nact.dispatch(actor, i);
  });
  nact.stop(system);
  return result;
}

async function comedyTell(count: number): Promise<number> {
  const system = comedy.createSystem({ test: true });
  const root = await system.rootActor();
  let received = 0;
  let resolve!: (v: number) => void;
  const done = new Promise<number>((r) => (resolve = r));
  let start = process.hrtime.bigint();
  const actor = await root.createChild(
    {
      tell(): void {
        if (++received === count) resolve(rate(count, start));
      },
    },
    { mode: 'in-memory' },
  );
  start = process.hrtime.bigint();
  for (let i = 0; i < count; i++) void actor.send('tell', i);
  const result = await done;
  await system.destroy();
  return result;
}

export const benchmark = defineBenchmark({
  name: 'core-tell',
  description: 'tell: 1 sender → 1 actor, 1M messages (target ≥ 0.5 × hand-written)',
  warmup: LOOP_WARMUP,
  cases: [
    { id: 'hand-written-tell-1M', metric: 'msgs_per_s', run: () => handWrittenTell(MESSAGES) },
    {
      id: 'granary-tell-1M',
      metric: 'msgs_per_s',
      baseline: 'hand-written-tell-1M',
      run: () => granaryTell(MESSAGES),
    },
    {
      id: 'nact-tell-1M',
      peer: true,
      metric: 'msgs_per_s',
      baseline: 'hand-written-tell-1M',
      run: () => nactTell(MESSAGES),
    },
    {
      id: 'comedy-tell-1M',
      peer: true,
      metric: 'msgs_per_s',
      baseline: 'hand-written-tell-1M',
      run: () => comedyTell(MESSAGES),
    },
  ],
});

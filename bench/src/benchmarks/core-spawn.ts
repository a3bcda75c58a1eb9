import { ActorSystem, Props, silentLogger, type PID } from '@granary/core';
import * as comedy from 'comedy';
import * as nact from 'nact';
import { HandWrittenActor } from '../baselines/hand-written-actor';
import { collectGarbage, defineBenchmark } from '../harness';

/** Actors per repetition (the 100k). */
const ACTORS = 100_000;
/**
 * comedy creates each child through an async handshake (~50 µs each here): 100k of them per
 * repetition would dominate the whole bench run, so it spawns 10k and reports per actor.
 */
const COMEDY_ACTORS = 10_000;

/** One spawn run: elapsed ms for spawn + one message each, and retained heap per actor. */
interface SpawnResult {
  ms: number;
  bytesPerActor: number;
}

function heapUsed(): number {
  collectGarbage();
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

async function measureSpawn(
  n: number,
  spawnAll: (onMessage: () => void) => Promise<unknown>,
  teardown: () => Promise<void> | void,
): Promise<SpawnResult> {
  let received = 0;
  let resolve!: () => void;
  const all = new Promise<void>((r) => (resolve = r));
  const before = heapUsed();
  const start = process.hrtime.bigint();
  // `keep` holds the references (PIDs/refs) a user would hold: part of the per-actor cost.
  const keep = await spawnAll(() => {
    if (++received === n) resolve();
  });
  await all;
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const bytesPerActor = (heapUsed() - before) / n;
  if (keep === undefined) throw new Error('spawnAll must return what keeps the actors');
  await teardown();
  return { ms, bytesPerActor };
}

async function handWritten(n: number): Promise<SpawnResult> {
  return measureSpawn(
    n,
    async (onMessage) => {
      const actors: HandWrittenActor<number>[] = new Array(n);
      for (let i = 0; i < n; i++) {
        actors[i] = new HandWrittenActor<number>(onMessage);
        actors[i]!.tell(1);
      }
      return actors;
    },
    () => {},
  );
}

async function granary(n: number): Promise<SpawnResult> {
  const system = new ActorSystem({ logger: silentLogger });
  return measureSpawn(
    n,
    async (onMessage) => {
      const props = Props.fromFunc((ctx) => {
        if (ctx.message === 1) onMessage();
      });
      const pids: PID[] = new Array(n);
      for (let i = 0; i < n; i++) {
        pids[i] = system.root.spawn(props);
        system.root.send(pids[i]!, 1);
      }
      return pids;
    },
    () => system.shutdown(),
  );
}

async function nactSpawn(n: number): Promise<SpawnResult> {
  const system = nact.start();
  return measureSpawn(
    n,
    async (onMessage) => {
      const refs: nact.Ref<number>[] = new Array(n);
      for (let i = 0; i < n; i++) {
        // Named: nact's random anonymous names collide within 100k.
        refs[i] = nact.spawn(
          system,
          (state: number = 0) => {
            onMessage();
            return state;
          },
          `a${i}`,
        );
        nact.dispatch(refs[i]!, 1);
      }
      return refs;
    },
    () => nact.stop(system),
  );
}

async function comedySpawn(n: number): Promise<SpawnResult> {
  const system = comedy.createSystem({ test: true });
  const root = await system.rootActor();
  return measureSpawn(
    n,
    async (onMessage) => {
      const refs: comedy.ActorRef[] = [];
      const definition = { hello: () => onMessage() };
      for (let i = 0; i < n; i++) {
        const ref = await root.createChild(definition, { mode: 'in-memory' });
        refs.push(ref);
        void ref.send('hello', 1);
      }
      return refs;
    },
    () => system.destroy(),
  );
}

export const benchmark = defineBenchmark({
  name: 'core-spawn',
  description: `spawn ${ACTORS} actors and send one message each: time, and heap bytes per actor after GC (target ≤ 400 B)`,
  repeats: 3,
  cases: [
    {
      id: 'hand-written-spawn-100k-ms',
      metric: 'ms',
      run: async () => (await handWritten(ACTORS)).ms,
    },
    {
      id: 'granary-spawn-100k-ms',
      metric: 'ms',
      baseline: 'hand-written-spawn-100k-ms',
      run: async () => (await granary(ACTORS)).ms,
    },
    {
      id: 'nact-spawn-100k-ms',
      peer: true,
      metric: 'ms',
      baseline: 'hand-written-spawn-100k-ms',
      run: async () => (await nactSpawn(ACTORS)).ms,
    },
    {
      id: 'comedy-spawn-10k-ms-x10',
      peer: true,
      metric: 'ms',
      baseline: 'hand-written-spawn-100k-ms',
      run: async () => (await comedySpawn(COMEDY_ACTORS)).ms * (ACTORS / COMEDY_ACTORS),
    },
    {
      id: 'hand-written-spawn-100k-bytes',
      metric: 'bytes_per_actor',
      run: async () => (await handWritten(ACTORS)).bytesPerActor,
    },
    {
      id: 'granary-spawn-100k-bytes',
      metric: 'bytes_per_actor',
      baseline: 'hand-written-spawn-100k-bytes',
      run: async () => (await granary(ACTORS)).bytesPerActor,
    },
    {
      id: 'nact-spawn-100k-bytes',
      peer: true,
      metric: 'bytes_per_actor',
      baseline: 'hand-written-spawn-100k-bytes',
      run: async () => (await nactSpawn(ACTORS)).bytesPerActor,
    },
    {
      id: 'comedy-spawn-10k-bytes',
      peer: true,
      metric: 'bytes_per_actor',
      baseline: 'hand-written-spawn-100k-bytes',
      run: async () => (await comedySpawn(COMEDY_ACTORS)).bytesPerActor,
    },
  ],
});

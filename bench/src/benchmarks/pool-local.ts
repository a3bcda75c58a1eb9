import { ActorSystem, Props, silentLogger, type PID } from '@granary/core';
import { spawnPool } from '@granary/pool';
import { sendNumbers } from '../send-loop';
import { collectGarbage, defineBenchmark, LOOP_WARMUP } from '../harness';

/** Messages per repetition (the 1M). */
const MESSAGES = 1_000_000;
/** Workers in the pool (the 8). */
const WORKERS = 8;

/**
 * Sends MESSAGES from the root context to `target` and resolves with the cost per message
 * (ns, wall clock) once every one was received by the counting actor(s).
 */
async function costPerMessage(build: (system: ActorSystem, done: () => void) => PID) {
  const system = new ActorSystem({ logger: silentLogger });
  try {
    let received = 0;
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const target = build(system, () => {
      if (++received === MESSAGES) finish();
    });
    // Let the pool's workers start so the timing is the forwarding, not the spawning.
    await system.root.request(target, 'ready').catch(() => undefined);
    received = 0;
    const start = process.hrtime.bigint();
    sendNumbers(system.root, target, MESSAGES);
    await finished;
    return Number(process.hrtime.bigint() - start) / MESSAGES;
  } finally {
    await system.shutdown();
  }
}

/** A counting actor; answers the `'ready'` probe. */
function counter(done: () => void): Props {
  return Props.fromFunc((ctx) => {
    const m = ctx.message;
    if (typeof m === 'number') done();
    else if (m === 'ready') ctx.respond(true);
  });
}

const direct = (system: ActorSystem, done: () => void): PID => system.root.spawn(counter(done));
const roundRobinPool = (system: ActorSystem, done: () => void): PID =>
  spawnPool(system.root, () => ({
    init: () => ({ poolSize: WORKERS, workerProps: counter(done) }),
  }));

/**
 * Both runs back to back, returning pool cost / direct cost: a paired sample, so a change in
 * machine load between the cases (the harness runs case after case) does not skew the ratio.
 */
async function pairedRatio(): Promise<number> {
  collectGarbage();
  const base = await costPerMessage(direct);
  collectGarbage();
  return (await costPerMessage(roundRobinPool)) / base;
}

export const benchmark = defineBenchmark({
  name: 'pool-local',
  description: `cost per message: a local pool of ${WORKERS} workers forwarding 1M messages vs a direct send of 1M to one actor`,
  warmup: LOOP_WARMUP,
  cases: [
    {
      id: 'direct-send-1M',
      metric: 'ns_per_msg',
      run: () => costPerMessage(direct),
    },
    {
      id: `pool-${WORKERS}-round-robin-1M`,
      metric: 'ns_per_msg',
      baseline: 'direct-send-1M',
      run: () => costPerMessage(roundRobinPool),
    },
    {
      id: `pool-${WORKERS}-round-robin-over-direct-paired`,
      metric: 'cost_ratio',
      run: pairedRatio,
    },
    {
      id: `pool-${WORKERS}-least-busy-1M`,
      metric: 'ns_per_msg',
      baseline: 'direct-send-1M',
      run: () =>
        costPerMessage((system, done) =>
          spawnPool(system.root, () => ({
            init: () => ({ poolSize: WORKERS, workerProps: counter(done), strategy: 'least-busy' }),
          })),
        ),
    },
  ],
});

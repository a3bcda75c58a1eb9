import { join } from 'node:path';
import { DemoRunner } from '@granary/example-ping-pong';
import type { DemoOptions } from '@granary/example-ping-pong';
import { startEtcd } from '@granary/testkit';
import type { EtcdHandle } from '@granary/testkit';
import { defineBenchmark } from '../harness';

/** The example's folder (its bin/ scripts are the node processes); this runs from bench/dist/benchmarks. */
const EXAMPLE_DIR = join(__dirname, '..', '..', '..', 'examples', 'ping-pong');
/** When the host of ponger-1 is killed: after the cluster is up and pongs flow. */
const KILL_AFTER_S = 5;
/** Upper bound of one run; the run stops as soon as pongs resume. */
const RUN_LIMIT_S = 25;

let etcd: EtcdHandle | undefined;

/**
 * One `npm run demo -- --kill-after 5` (the runner in this process, the nodes as processes),
 * interrupted as soon as pongs resume; resolves with the pause the demo printed.
 */
async function failoverPauseMs(options: Partial<DemoOptions>): Promise<number> {
  let runner: DemoRunner | undefined = undefined;
  const out = {
    line: (text: string) => {
      if (/\[demo\]\s+pongs resumed from/.test(text)) runner?.interrupt();
    },
  };
  runner = new DemoRunner(
    {
      seconds: RUN_LIMIT_S,
      killAfter: KILL_AFTER_S,
      provider: 'seed',
      etcd: [],
      redis: 'off', // as measured before the demo had Redis by default
      ...options,
    },
    out,
    EXAMPLE_DIR,
  );
  const result = await runner.run();
  const pause = result.failover?.pauseMs;
  if (pause === undefined) throw new Error('pongs did not resume after the kill');
  return pause;
}

export const benchmark = defineBenchmark({
  name: 'ping-pong-demo',
  description:
    'the pause the ping-pong demo shows: SIGKILL of the node hosting ponger-1 (4 node processes ' +
    'on loopback) until the next pong from the other ponger node, in ms; seed provider (TTL 3 s) ' +
    'vs etcd (lease TTL 3 s)',
  repeats: 3,
  warmup: 0,
  async setup() {
    etcd = await startEtcd();
  },
  async teardown() {
    await etcd?.stop();
  },
  cases: [
    {
      id: 'seed-sigkill-pause',
      metric: 'ms',
      run: () => failoverPauseMs({ provider: 'seed' }),
    },
    {
      id: 'etcd-sigkill-pause',
      metric: 'ms',
      baseline: 'seed-sigkill-pause',
      run: () => failoverPauseMs({ provider: 'etcd', etcd: etcd?.endpoints ?? [] }),
    },
  ],
});

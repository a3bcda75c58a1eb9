import { Cluster, MemoryClusterTable, MemoryProvider, kind } from '@granary/cluster';
import type { TestCluster } from '@granary/testkit';
import { defineBenchmark } from '../harness';
import { inFlight } from '../in-flight';
import { startPeerAndClient } from './grains-calls';

/** New identities per repetition. */
const ACTIVATIONS = 20_000;
const IN_FLIGHT = 1000;

let local: Cluster;
let tc: TestCluster;
let client: Cluster;
let run = 0;

export const benchmark = defineBenchmark({
  name: 'grains-activation',
  description:
    'activations of new identities, 1,000 in flight: on one node called locally, and on a node ' +
    'process called from a client member in this process (each call activates a new grain)',
  repeats: 5,
  async setup() {
    local = await Cluster.start({
      name: 'bench-act',
      id: 'local',
      provider: new MemoryProvider(new MemoryClusterTable(), { ttlMs: 10_000 }),
      kinds: [kind('echo', () => ({ receive: () => 1 }), { idleTimeoutMs: 600_000 })],
      remote: { host: '127.0.0.1', port: 0 },
    });
    ({ tc, client } = await startPeerAndClient('bench-act-remote'));
  },
  async teardown() {
    await local.shutdown({ graceful: false });
    await client.shutdown({ graceful: false });
    await tc.stop();
  },
  cases: [
    {
      id: 'activations-local',
      metric: 'activations_per_s',
      run: async () => {
        const prefix = `l${run++}-`;
        return (await inFlight(ACTIVATIONS, IN_FLIGHT, (n) => local.request('echo', prefix + n, 1)))
          .perSecond;
      },
    },
    {
      id: 'activations-from-another-node',
      metric: 'activations_per_s',
      run: async () => {
        const prefix = `r${run++}-`;
        return (
          await inFlight(ACTIVATIONS, IN_FLIGHT, (n) =>
            client.request('echo', prefix + n, { n }, { timeoutMs: 30_000 }),
          )
        ).perSecond;
      },
    },
  ],
});

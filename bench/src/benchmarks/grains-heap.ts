import { Cluster, MemoryClusterTable, MemoryProvider, kind } from '@granary/cluster';
import { collectGarbage, defineBenchmark } from '../harness';
import { inFlight } from '../in-flight';

/** Idle grains per repetition. */
const GRAINS = 50_000;

/** The grain: an empty class, as users write them (no per-instance closures). */
class Idle {
  receive(): number {
    return 1;
  }
}

let cluster: Cluster;
let run = 0;

export const benchmark = defineBenchmark({
  name: 'grains-heap',
  description:
    'heap per idle active grain (an empty grain class): heapUsed after activating 50,000 grains ' +
    'minus before, after GC, divided by the count (target <= 600 B)',
  repeats: 3,
  async setup() {
    cluster = await Cluster.start({
      name: 'bench-heap',
      id: 'heap',
      provider: new MemoryProvider(new MemoryClusterTable(), { ttlMs: 10_000 }),
      kinds: [kind('idle', () => new Idle(), { idleTimeoutMs: 60_000 })],
      remote: { host: '127.0.0.1', port: 0 },
    });
  },
  teardown: () => cluster.shutdown({ graceful: false }),
  cases: [
    {
      id: 'heap-per-idle-grain',
      metric: 'bytes_per_grain',
      run: async () => {
        const prefix = `h${run++}-`;
        collectGarbage();
        const before = process.memoryUsage().heapUsed;
        const start = cluster.activationCount();
        await inFlight(GRAINS, 1000, (n) => cluster.request('idle', prefix + n, 1));
        collectGarbage();
        const after = process.memoryUsage().heapUsed;
        return (after - before) / (cluster.activationCount() - start);
      },
    },
  ],
});

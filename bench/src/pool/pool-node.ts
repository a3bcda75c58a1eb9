/**
 * A member process of the pool-cluster benchmark: joins the cluster through etcd and hosts
 * the pools named on the command line. Its CPU-bound workers hash for ~1 ms per request, on the
 * member's event loop, or in POOL_THREADS worker threads for a pool whose name ends in `-threads`.
 * Prints one line `ready` when joined; exits when the parent disconnects.
 *
 * argv: <etcd endpoint> <cluster name> <member id> <pbkdf2 iterations> <pool names, comma-separated>
 */
import { pbkdf2Sync } from 'node:crypto';
import * as path from 'node:path';
import { Cluster, EtcdProvider, threaded, type Grain, type GrainContext } from '@granary/cluster';
import { poolKind } from '@granary/pool';
import { POOL_SIZE, POOL_MAX_IN_FLIGHT, POOL_THREADS } from './pool-bench-config';

const [endpoint, name, id, iterationsArg, pools] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
];
const iterations = Number(iterationsArg);
process.env.POOL_BENCH_ITERATIONS = iterationsArg; // read by hash-task in each worker thread
const hashInThreads = threaded({
  module: path.join(__dirname, 'hash-task.js'),
  threads: POOL_THREADS,
});

/** About 1 ms of hashing per request, on this process's event loop. */
class Hasher implements Grain {
  receive(ctx: GrainContext): unknown {
    return pbkdf2Sync(String(ctx.message), 'granary', iterations, 32, 'sha256').toString('hex');
  }
}

async function main(): Promise<void> {
  const kinds = pools.split(',').map((pool) =>
    poolKind(pool, pool.endsWith('-threads') ? hashInThreads : () => new Hasher(), {
      size: POOL_SIZE,
      maxInFlight: POOL_MAX_IN_FLIGHT,
    }).on(id),
  );
  const cluster = await Cluster.start({
    name,
    id,
    provider: new EtcdProvider({ endpoints: [endpoint] }),
    kinds,
    remote: { host: '127.0.0.1', port: 0 },
  });
  process.stdout.write('ready\n');
  process.on('disconnect', () => {
    void cluster.shutdown({ graceful: false }).finally(() => process.exit(0));
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`pool-node ${id} failed: ${String(err)}\n`);
  process.exit(1);
});

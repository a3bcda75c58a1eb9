/**
 * A member process of the pool-cluster benchmark: joins the cluster through etcd and hosts
 * the pools named on the command line. Its CPU-bound workers hash for ~1 ms per request.
 * Prints one line `ready` when joined; exits when the parent disconnects.
 *
 * argv: <etcd endpoint> <cluster name> <member id> <pbkdf2 iterations> <pool names, comma-separated>
 */
import { pbkdf2Sync } from 'node:crypto';
import { Cluster, EtcdProvider, type Grain, type GrainContext } from '@granary/cluster';
import { poolKind } from '@granary/pool';
import { POOL_SIZE, POOL_MAX_IN_FLIGHT } from './pool-bench-config';

const [endpoint, name, id, iterationsArg, pools] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
];
const iterations = Number(iterationsArg);

/** About 1 ms of hashing per request, on this process's event loop. */
class Hasher implements Grain {
  receive(ctx: GrainContext): unknown {
    return pbkdf2Sync(String(ctx.message), 'granary', iterations, 32, 'sha256').toString('hex');
  }
}

async function main(): Promise<void> {
  const kinds = pools.split(',').map((pool) =>
    poolKind(pool, () => new Hasher(), {
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

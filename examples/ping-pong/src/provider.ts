import { EtcdProvider, SeedProvider } from '@granary/cluster';
import type { ClusterLogger, ClusterProvider } from '@granary/cluster';
import type { NodeConfig } from './config';

/** Lease TTL of the etcd provider: a killed ponger's grains move after about this long. */
const ETCD_TTL_SECONDS = 3;

/**
 * The membership provider `config.provider` names, for this node: the seed provider (the seed
 * node keeps the table, the others join it at `GRANARY_SEED`) or etcd.
 */
export function createProvider(config: NodeConfig, logger: ClusterLogger): ClusterProvider {
  if (config.provider === 'etcd') {
    return new EtcdProvider({ endpoints: config.etcd, ttlSeconds: ETCD_TTL_SECONDS, logger });
  }
  return new SeedProvider({ seed: config.seed, isSeed: config.role === 'seed', logger });
}

import * as clusterPackage from '@granary/cluster';
import type { ClusterProvider, ClusterLogger } from '@granary/cluster';
import type { NodeConfig } from './config';
import { ConfigError } from './errors';

/** Lease TTL of the etcd provider: a killed ponger's grains move after about this long. */
const ETCD_TTL_SECONDS = 3;

/** The SeedProvider class of @granary/cluster, if this build has one. */
function seedProviderClass():
  (new (options: Record<string, unknown>) => ClusterProvider) | undefined {
  return (clusterPackage as Record<string, unknown>).SeedProvider as
    (new (options: Record<string, unknown>) => ClusterProvider) | undefined;
}

/** True when @granary/cluster has SeedProvider (the demo's embedded default). */
export function hasSeedProvider(): boolean {
  return seedProviderClass() !== undefined;
}

/** The membership provider `config.provider` names, for this node. */
export function createProvider(config: NodeConfig, logger: ClusterLogger): ClusterProvider {
  if (config.provider === 'etcd') {
    return new clusterPackage.EtcdProvider({
      endpoints: config.etcd,
      ttlSeconds: ETCD_TTL_SECONDS,
      logger,
    });
  }
  const SeedProvider = (clusterPackage as Record<string, unknown>).SeedProvider as
    (new (options: Record<string, unknown>) => ClusterProvider) | undefined;
  if (SeedProvider === undefined) {
    throw new ConfigError(
      'GRANARY_PROVIDER',
      'this build of @granary/cluster has no SeedProvider yet; run with GRANARY_PROVIDER=etcd',
    );
  }
  return new SeedProvider({ seed: config.seed, isSeed: config.role === 'seed', logger });
}

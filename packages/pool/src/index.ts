export { VERSION } from './version';
export { AsyncPool, DEFAULT_ASYNC_POOL_OPTIONS } from './async-pool';
export type { AsyncPoolOptions, AsyncPoolStats, GetOptions } from './async-pool';
export { spawnPool } from './pool';
export type { SpawnPoolOptions } from './pool';
export { DEFAULT_POOL_OPTIONS } from './pool-behavior';
export type {
  PoolBehavior,
  PoolContext,
  PoolInspection,
  PoolOptions,
  WorkerFactory,
} from './pool-behavior';
export {
  broadcast,
  consistentHash,
  leastBusy,
  random,
  resolveStrategy,
  roundRobin,
} from './pool-strategy';
export type { PoolStrategy, PoolStrategyName, WorkerLoad } from './pool-strategy';
export { poolKind, DEFAULT_POOL_KIND_OPTIONS } from './cluster/pool-kind';
export type { PoolKind, PoolKindOptions } from './cluster/pool-kind';
export { PoolClient } from './cluster/pool-client';
export { DEFAULT_POOL_CLIENT_OPTIONS } from './cluster/pool-client-options';
export { GrainPoolClient } from './cluster/grain-pool-client';
export type { PoolCaller } from './cluster/pool-client';
export type { ClusterPoolStats, PoolClientOptions } from './cluster/pool-client-options';
export type { WorkerStats } from './cluster/internal/pool-protocol';
export { InspectPool, POOL_PRIORITY_HEADER, inspectPool, requestUrgent } from './urgent-requests';
export {
  PoolError,
  PoolTimeoutError,
  PoolClosedError,
  PoolAbortError,
  PoolFactoryError,
  PoolElementError,
  PoolDisposeError,
  PoolSaturatedError,
  PoolStateError,
  PoolUnhandledRequestError,
  PoolUnavailableError,
  PoolClientOptionsError,
} from './errors';

export { VERSION } from './version';
export { AsyncPool, DEFAULT_ASYNC_POOL_OPTIONS } from './async-pool';
export type { AsyncPoolOptions, AsyncPoolStats, GetOptions } from './async-pool';
export { spawnPool } from './pool';
export type { SpawnPoolOptions } from './pool';
export { DEFAULT_POOL_OPTIONS } from './pool-behavior';
export type { PoolBehavior, PoolContext, PoolInspection, PoolOptions } from './pool-behavior';
export {
  broadcast,
  consistentHash,
  leastBusy,
  random,
  resolveStrategy,
  roundRobin,
} from './pool-strategy';
export type { PoolStrategy, PoolStrategyName, WorkerLoad } from './pool-strategy';
export { InspectPool, POOL_PRIORITY_HEADER, inspectPool, requestUrgent } from './urgent';
export {
  PoolError,
  PoolTimeoutError,
  PoolClosedError,
  PoolAbortError,
  PoolFactoryError,
  PoolElementError,
  PoolDisposeError,
  PoolOptionsError,
  PoolSaturatedError,
  PoolStateError,
  PoolUnhandledRequestError,
} from './errors';

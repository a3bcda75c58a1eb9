export { VERSION } from './version';
export { AsyncPool, DEFAULT_ASYNC_POOL_OPTIONS } from './async-pool';
export type { AsyncPoolOptions, AsyncPoolStats, GetOptions } from './async-pool';
export {
  PoolError,
  PoolTimeoutError,
  PoolClosedError,
  PoolAbortError,
  PoolFactoryError,
  PoolElementError,
  PoolDisposeError,
  PoolOptionsError,
} from './errors';

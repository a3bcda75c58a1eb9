/** Workers per pool: 4, so one member runs all 4 or two members run 2 each. */
export const POOL_SIZE = 4;
/** Calls a caller keeps outstanding per worker: 2 keeps every worker busy between replies. */
export const POOL_MAX_IN_FLIGHT = 2;
/** Worker threads per member of a threaded pool: one per core of the 2-core bench machine. */
export const POOL_THREADS = 2;

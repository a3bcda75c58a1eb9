import { GranaryError, registerErrorClasses } from '@granary/core';

/**
 * Base of every error thrown by @granary/pool: a Granary error (fixed `name`, stable `code`
 * string to branch on, `cause` where there is one).
 */
export class PoolError extends GranaryError {
  static override readonly code: string = 'ERR_POOL';
  override readonly name: string = 'PoolError';
}

/** `AsyncPool.get` found no element within its deadline. */
export class PoolTimeoutError extends PoolError {
  static override readonly code = 'ERR_POOL_TIMEOUT';
  override readonly name = 'PoolTimeoutError';

  constructor(
    /** The deadline that expired, in milliseconds. */
    readonly timeoutMs: number,
  ) {
    super(`no pool element became free within ${timeoutMs} ms (timeoutMs)`);
  }
}

/** The pool was closed: pending and later `get` calls reject with this. */
export class PoolClosedError extends PoolError {
  static override readonly code = 'ERR_POOL_CLOSED';
  override readonly name = 'PoolClosedError';

  constructor(what = 'pool') {
    super(`${what} is closed`);
  }
}

/**
 * The caller's AbortSignal fired while it waited. Its `name` is `AbortError` and its code
 * `ERR_ABORTED`, like DOM / Node abort errors and core's `AbortError`, so existing
 * `err.name === 'AbortError'` checks keep working; `cause` is the signal's reason.
 */
export class PoolAbortError extends PoolError {
  static override readonly code = 'ERR_ABORTED';
  override readonly name = 'AbortError';

  constructor(reason?: unknown) {
    super('waiting for a pool element was aborted (signal)', { cause: reason });
  }
}

/** The element factory (`create`) threw or rejected; `cause` is what it threw. */
export class PoolFactoryError extends PoolError {
  static override readonly code = 'ERR_POOL_FACTORY';
  override readonly name = 'PoolFactoryError';

  constructor(cause: unknown) {
    super(`the pool's element factory failed (create): ${describe(cause)}`, {
      cause,
    });
  }
}

/** `release` or `destroy` got a value that is not currently leased from this pool. */
export class PoolElementError extends PoolError {
  static override readonly code = 'ERR_POOL_ELEMENT';
  override readonly name = 'PoolElementError';

  constructor(operation: 'release' | 'destroy') {
    super(
      `${operation}() was given an element that is not leased from this pool (already returned, destroyed, or foreign)`,
    );
  }
}

/** Closing one or more elements (the `close` option) failed; `cause` is an AggregateError. */
export class PoolDisposeError extends PoolError {
  static override readonly code = 'ERR_POOL_DISPOSE';
  override readonly name = 'PoolDisposeError';

  constructor(errors: unknown[]) {
    super(`closing ${errors.length} pool element(s) failed (close): ${describe(errors[0])}`, {
      cause: new AggregateError(errors, 'element close failures'),
    });
  }
}

/**
 * Every worker refused the message (all mailboxes full, or the consistent-hash worker's is):
 * a request rejects with this at once, a plain send is dead-lettered with it. The backpressure
 * signal of the pool (ergo's act.Pool 503): add workers or raise `workerMailboxSize`.
 */
export class PoolSaturatedError extends PoolError {
  static override readonly code = 'ERR_POOL_SATURATED';
  override readonly name = 'PoolSaturatedError';

  constructor(
    /** The pool, as `address/id`. */
    readonly pool: string,
    /** Workers the pool tried. */
    readonly tried: number,
    /** The per-worker bound that was reached (mailbox size, or in-flight cap). */
    readonly workerMailboxSize: number,
    /** The options that set the bound, for the message. */
    options = 'poolSize, workerMailboxSize',
  ) {
    super(
      `pool ${pool} is saturated: ${tried} worker(s) tried, each with ${workerMailboxSize} messages outstanding (${options})`,
    );
  }
}

/** `addWorkers` / `removeWorkers` was called while the pool was not running. */
export class PoolStateError extends PoolError {
  static override readonly code = 'ERR_POOL_STATE';
  override readonly name = 'PoolStateError';

  constructor(operation: string, state: string) {
    super(`${operation} is only allowed while the pool is running; it is ${state}`);
  }
}

/**
 * An urgent request reached the pool and its `handleCall` is missing or returned
 * `undefined`: the caller gets this at once instead of waiting for its timeout. (Urgent
 * messages are never forwarded to workers.)
 */
export class PoolUnhandledRequestError extends PoolError {
  static override readonly code = 'ERR_POOL_UNHANDLED_REQUEST';
  override readonly name = 'PoolUnhandledRequestError';

  constructor(
    readonly pool: string,
    /** Type name of the request. */
    readonly requestType: string,
  ) {
    super(
      `pool ${pool} did not answer the urgent request ${requestType} (handleCall returned undefined or is not defined); send work without priority to reach a worker`,
    );
  }
}

/** No live member hosts the cluster pool (or none answered), so there is no worker to call. */
export class PoolUnavailableError extends PoolError {
  static override readonly code = 'ERR_POOL_UNAVAILABLE';
  override readonly name = 'PoolUnavailableError';

  constructor(readonly pool: string) {
    super(`no member hosts pool ${pool}: start members with kinds: [poolKind(...).on(memberId)]`);
  }
}

/**
 * `PoolClient.get` was given an option whose value differs from the one of the client it
 * returns: there is one client per caller and pool (its placement, counters and metrics are
 * shared), made with the options of the first `get`, so a later call's could not take effect.
 */
export class PoolClientOptionsError extends PoolError {
  static override readonly code = 'ERR_POOL_CLIENT_OPTIONS';
  override readonly name = 'PoolClientOptionsError';

  constructor(
    /** The pool's name. */
    readonly pool: string,
    /** The option that differs. */
    readonly option: string,
    /** The value this call gave. */
    readonly given: unknown,
    /** The value of the existing client. */
    readonly current: unknown,
  ) {
    super(
      `PoolClient.get('${pool}') was given ${option}: ${String(given)}, but this caller's client of pool ${pool} exists with ${option}: ${String(current)} (one client per caller and pool, made with the first call's options): give the same options, or none`,
    );
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

// PoolAbortError is left out: its code is core's ERR_ABORTED, which comes off the wire as
// core's AbortError (`PoolAbortError.is()` still matches it by code).
registerErrorClasses(
  PoolError,
  PoolTimeoutError,
  PoolClosedError,
  PoolFactoryError,
  PoolElementError,
  PoolDisposeError,
  PoolSaturatedError,
  PoolStateError,
  PoolUnhandledRequestError,
  PoolUnavailableError,
  PoolClientOptionsError,
);

import { JoinTimeoutError } from '../../errors';
import { JitteredBackoff } from '../../internal/jittered-backoff';
import type { ClusterLogger } from '../../internal/logger';

/** First retry delay of join() while etcd is unreachable. */
export const JOIN_BACKOFF_INITIAL_MS = 100;
/** Cap of the join backoff: a starting member comes back within this long of etcd returning. */
export const JOIN_BACKOFF_MAX_MS = 1000;

/** What retryUntil says when it gives up, and how it knows to stop. */
export interface JoinRetry {
  /** What the operation does, e.g. "read the topology" (for the log and the error). */
  what: string;
  endpoints: readonly string[];
  joinTimeoutMs: number;
  logger: ClusterLogger;
  /** True once the provider stopped: the last error is thrown as it is. */
  stopped(): boolean;
}

/**
 * Runs `op` until it succeeds, with the join's jittered backoff, until `deadline`; then throws
 * JoinTimeoutError naming the endpoints, the attempts and the last error. A step of join() after
 * the registration (the first topology read) must survive a slow etcd as the registration does:
 * in a storm of 128 members starting at once, one read past the request deadline failed a join.
 */
export async function retryUntil(
  deadline: number,
  op: () => Promise<void>,
  retry: JoinRetry,
): Promise<void> {
  const backoff = new JitteredBackoff(JOIN_BACKOFF_INITIAL_MS, JOIN_BACKOFF_MAX_MS);
  for (let attempt = 1; ; attempt++) {
    try {
      await op();
      return;
    } catch (err) {
      if (retry.stopped()) throw err;
      const delay = backoff.next();
      if (Date.now() + delay >= deadline) {
        throw new JoinTimeoutError(
          `could not ${retry.what} from etcd at ${retry.endpoints.join(', ')} within ` +
            `${retry.joinTimeoutMs} ms (joinTimeoutMs) after ${attempt} attempts: ${(err as Error).message}`,
          { cause: err },
        );
      }
      retry.logger.warn(
        { err, attempt, retryInMs: Math.round(delay) },
        `could not ${retry.what}; retrying in ${Math.round(delay)} ms`,
      );
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

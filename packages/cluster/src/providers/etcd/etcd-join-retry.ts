import { JoinTimeoutError } from '../../errors';
import { JitteredBackoff } from '../../internal/jittered-backoff';
import type { ClusterLogger } from '../../internal/logger';

/** First retry delay of join() while etcd is unreachable. */
export const JOIN_BACKOFF_INITIAL_MS = 100;
/** Cap of the join backoff: a starting member comes back within this long of etcd returning. */
export const JOIN_BACKOFF_MAX_MS = 1000;

/** Longest deadline of one request of a join, in multiples of requestTimeoutMs. */
const MAX_ATTEMPT_TIMEOUT_FACTOR = 4;

/**
 * The time a join may take: `joinTimeoutMs` in which etcd answers nothing. Each step etcd answers
 * (the lease granted, the member key written) renews it: on a starved etcd (a storm of 128
 * members on 2 cores) a registration took most of joinTimeoutMs, and the first topology read
 * after it, left the rest, missed its deadline with no time to retry, failing a join etcd was
 * serving. So a JoinTimeoutError still means "etcd answered no step for joinTimeoutMs", and a
 * join takes at most (steps + 1) x joinTimeoutMs.
 */
export class JoinBudget {
  private end: number;

  constructor(
    /** joinTimeoutMs. */
    readonly timeoutMs: number,
    /** requestTimeoutMs: the first attempt's deadline of each request. */
    private readonly requestTimeoutMs: number,
  ) {
    this.end = Date.now() + timeoutMs;
  }

  /** When the join gives up (Date.now() clock). */
  get deadline(): number {
    return this.end;
  }

  /** etcd answered a step: the next one has joinTimeoutMs again. */
  progress(): void {
    this.end = Math.max(this.end, Date.now() + this.timeoutMs);
  }

  /**
   * The deadline (ms from now) of attempt `attempt` (1-based) of one request: requestTimeoutMs,
   * doubled after each attempt that failed, up to 4 x, within the budget. A request etcd is only
   * slow to answer (it applies proposals seconds late under a join storm) is then waited for
   * instead of sent again and again, each copy more work for the same starved etcd; the requests
   * of a join are idempotent (the lease id is the member's, the member key is created once).
   */
  attemptTimeoutMs(attempt: number): number {
    const factor = Math.min(2 ** Math.max(0, attempt - 1), MAX_ATTEMPT_TIMEOUT_FACTOR);
    const grown = this.requestTimeoutMs * factor;
    return Math.max(this.requestTimeoutMs, Math.min(grown, this.end - Date.now()));
  }
}

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
 * Runs `op` (given its attempt's deadline, ms) until it succeeds, with the join's jittered backoff,
 * until the budget's deadline (success renews the budget); then throws
 * JoinTimeoutError naming the endpoints, the attempts and the last error. A step of join() after
 * the registration (the first topology read) must survive a slow etcd as the registration does:
 * in a storm of 128 members starting at once, one read past the request deadline failed a join.
 */
export async function retryUntil(
  budget: JoinBudget,
  op: (timeoutMs: number) => Promise<void>,
  retry: JoinRetry,
): Promise<void> {
  const backoff = new JitteredBackoff(JOIN_BACKOFF_INITIAL_MS, JOIN_BACKOFF_MAX_MS);
  for (let attempt = 1; ; attempt++) {
    try {
      await op(budget.attemptTimeoutMs(attempt));
      budget.progress();
      return;
    } catch (err) {
      if (retry.stopped()) throw err;
      const delay = backoff.next();
      if (Date.now() + delay >= budget.deadline) {
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

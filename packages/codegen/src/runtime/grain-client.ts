import type { GrainCallOptions } from '@granary/cluster';
import type { CallOptions, ClusterLike } from './cluster-like';
import { InvalidReplyError, UnimplementedError } from './errors';
import { grainInvoke, isGrainInvokeResult, payloadOf } from './grain-invoke';
import type { MessageCodec, MessageInit } from './message-codec';

/** First wait before a retry; doubled per attempt so a failing node is not hammered. */
const RETRY_BACKOFF_MS = 20;
/** Longest wait between retries: retries exist to ride out a rebalance, which takes ~100s of ms. */
const RETRY_BACKOFF_MAX_MS = 500;

/**
 * Error codes a retry can help with: the attempt timed out, or placement / transport failed
 * (the grain moved, its node died, a mailbox was full). Errors thrown by grain code
 * (`GrainError`) and bad input are not in this list, so they are never retried.
 */
const RETRYABLE_CODES = new Set([
  'ERR_DEADLINE_EXCEEDED',
  'ERR_TIMEOUT',
  'ERR_ENDPOINT_UNAVAILABLE',
  'ERR_NOT_OWNER',
  'ERR_DEAD_LETTER',
  'ERR_MAILBOX_FULL',
]);

/** Defaults of `CallOptions` that the client itself applies. */
export const DEFAULT_CALL_OPTIONS = { retries: 0 } as const;

interface CodedError {
  code?: unknown;
  originalCode?: unknown;
}

/**
 * Base of every generated `XxxClient`: a handle on one grain (`kind/identity`). Creating one
 * costs nothing; each rpc method encodes the request, sends a `granary.GrainInvoke` with
 * `cluster.request`, and decodes the `granary.GrainInvokeResult`.
 */
export abstract class GrainClient {
  /** `$` names keep rpc methods (proto identifiers never contain `$`) from colliding. */
  constructor(
    protected readonly $cluster: ClusterLike,
    protected readonly $kind: string,
    protected readonly $identity: string,
  ) {}

  /** The grain's identity within its kind. */
  get identity(): string {
    return this.$identity;
  }

  /** The kind the client addresses. */
  get kind(): string {
    return this.$kind;
  }

  /** Sends `message` to the grain without waiting (handled by its `receiveDefault`). */
  protected $send(message: unknown): void {
    this.$cluster.send(this.$kind, this.$identity, message);
  }

  /**
   * One rpc: encode, request, decode. The options go to the cluster as the caller gave them
   * (every `GrainCallOptions` field), except `retries`, which this loop spends.
   */
  protected async $invoke<Req, Res>(
    path: string,
    requestCodec: MessageCodec<Req>,
    responseCodec: MessageCodec<Res>,
    request: MessageInit<Req>,
    options: CallOptions = {},
  ): Promise<Res> {
    const { retries = DEFAULT_CALL_OPTIONS.retries, ...requestOptions } = options;
    const message = grainInvoke(path, requestCodec.encode(request));
    for (let attempt = 0; ; attempt++) {
      let reply: unknown;
      try {
        reply = await this.$cluster.request<unknown>(
          this.$kind,
          this.$identity,
          message,
          requestOptions satisfies GrainCallOptions,
        );
      } catch (err) {
        const mapped = this.$mapError(path, err);
        if (attempt >= retries || !isRetryable(mapped)) throw mapped;
        if (options.signal?.aborted) throw options.signal.reason;
        await backoff(attempt, options.signal);
        continue;
      }
      if (!isGrainInvokeResult(reply)) throw new InvalidReplyError(path, reply);
      return responseCodec.decode(payloadOf(reply) ?? new Uint8Array(0));
    }
  }

  /** A GrainError from an `UnimplementedError` the grain threw becomes one again. */
  private $mapError(path: string, err: unknown): unknown {
    const e = (typeof err === 'object' && err !== null ? err : {}) as CodedError;
    const unimplemented = e.code === 'ERR_GRAIN' && e.originalCode === 'ERR_UNIMPLEMENTED';
    if (!unimplemented) return err;
    return new UnimplementedError(
      path,
      `grain ${this.$kind}/${this.$identity} does not implement ${path}`,
      { cause: err },
    );
  }
}

function isRetryable(err: unknown): boolean {
  const code = (err as CodedError | null)?.code;
  return typeof code === 'string' && RETRYABLE_CODES.has(code);
}

/** Waits before retry `attempt + 1`; rejects with the signal's reason when it aborts. */
function backoff(attempt: number, signal: AbortSignal | undefined): Promise<void> {
  const delay = Math.min(RETRY_BACKOFF_MS * 2 ** attempt, RETRY_BACKOFF_MAX_MS);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, delay);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

import type { CallOptions, ClusterLike } from './cluster-like';
import { InvalidReplyError, UnimplementedError } from './errors';
import { grainInvoke, isGrainInvokeResult, payloadOf } from './grain-invoke';
import type { MessageCodec, MessageInit } from './message-codec';

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
   * (every `GrainCallOptions` field, `retries` and `idempotent` included): the cluster's caller
   * is the one place a grain call is retried, within its deadline.
   */
  protected async $invoke<Req, Res>(
    path: string,
    requestCodec: MessageCodec<Req>,
    responseCodec: MessageCodec<Res>,
    request: MessageInit<Req>,
    options?: CallOptions,
  ): Promise<Res> {
    const message = grainInvoke(path, requestCodec.encode(request));
    let reply: unknown;
    try {
      reply = await this.$cluster.request<unknown>(this.$kind, this.$identity, message, options);
    } catch (err) {
      throw this.$mapError(path, err);
    }
    if (!isGrainInvokeResult(reply)) throw new InvalidReplyError(path, reply);
    return responseCodec.decode(payloadOf(reply) ?? new Uint8Array(0));
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

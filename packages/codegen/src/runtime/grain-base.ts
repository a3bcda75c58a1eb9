import { stateOf } from '@granary/cluster';
import type { InvokeContext } from './cluster-like';
import { MissingResponseError, UnimplementedError } from './errors';
import { grainInvokeResult, isGrainInvoke, payloadOf } from './grain-invoke';
import type { GrainInvoke } from './grain-invoke';
import type { ServiceDefinition } from './service';
import { typeNameOf } from './type-tag';

/**
 * Base of every generated `XxxGrain` class. `receive` decodes a `granary.GrainInvoke`, calls
 * the rpc method, encodes its result and responds with a `granary.GrainInvokeResult`; an
 * unknown method throws `UnimplementedError` (the caller receives it as such). Any other
 * message goes to `receiveDefault`, like Proto.Actor's `ReceiveDefault`.
 *
 * `S` is the state the grain's kind declares (`ponger(() => new Ponger(), { state: { store,
 * codec, initial } })`): `this.state`, `this.writeState()` and `this.clearState()` are the
 * runtime's, loaded before the first message and fenced by the shard epoch.
 */
export abstract class GrainBase<Ctx extends InvokeContext, S = unknown> {
  /** The generated dispatch table of the service. */
  protected abstract readonly $service: ServiceDefinition<never, Ctx>;

  /** Called once when the grain activates, before its first message. */
  onActivate?(ctx: Ctx): void | Promise<void>;

  /** Called when the grain deactivates (idle passivation, shutdown, rebalancing). */
  onDeactivate?(reason: string): void | Promise<void>;

  /**
   * Handles messages that are not rpc calls (`cluster.send(kind, id, msg)`, or a request with
   * a plain message). Without it, such messages fail with `UnimplementedError`.
   */
  receiveDefault?(ctx: Ctx): unknown;

  /** The state the grain's kind declares (loaded before the first message). */
  protected get state(): S {
    return stateOf<S>(this, 'this.state').state;
  }

  protected set state(value: S) {
    stateOf<S>(this, 'this.state').state = value;
  }

  /** The stored version of the state this activation holds (null: nothing stored yet). */
  protected get stateVersion(): number | null {
    return stateOf<S>(this, 'this.stateVersion').version;
  }

  /**
   * Stores the state, fenced by version and shard epoch. A conflict deactivates the grain and
   * rejects with InconsistentStateError, which reaches the caller as it is.
   */
  protected writeState(): Promise<number> {
    return stateOf<S>(this, 'writeState()').write();
  }

  /** Removes the stored state (the state is `initial()` again); rejects like writeState(). */
  protected clearState(): Promise<void> {
    return stateOf<S>(this, 'clearState()').clear();
  }

  /** Entry point the cluster calls for every message. */
  receive(ctx: Ctx): unknown {
    const message = ctx.message;
    if (isGrainInvoke(message)) return this.$invokeMethod(message, ctx);
    if (this.receiveDefault !== undefined) return this.receiveDefault(ctx);
    const type = typeNameOf(message) ?? typeof message;
    throw new UnimplementedError(
      type,
      `grain ${this.$service.kindName} got a ${type} message and has no receiveDefault(ctx) for it`,
    );
  }

  private async $invokeMethod(invoke: GrainInvoke, ctx: Ctx): Promise<void> {
    const method = this.$service.methods.get(invoke.method);
    if (method === undefined) {
      throw new UnimplementedError(
        invoke.method,
        `method ${invoke.method} is not part of service ${this.$service.kindName} on this grain`,
      );
    }
    const request = method.request.decode(payloadOf(invoke) ?? new Uint8Array(0));
    const response = await method.handler(this as never, request as never, ctx);
    if (response === undefined || response === null) {
      throw new MissingResponseError(invoke.method, method.response.typeName);
    }
    ctx.respond(grainInvokeResult(method.response.encode(response)));
  }
}

/**
 * Thrown by the default body of every generated rpc method, so a grain that does not override
 * a method answers `UnimplementedError`.
 */
export function unimplemented(path: string): never {
  throw new UnimplementedError(path);
}

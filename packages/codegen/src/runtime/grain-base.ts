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
 */
export abstract class GrainBase<Ctx extends InvokeContext> {
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

import type { GrainContext } from '@granary/cluster';
import type { Logger } from '@granary/core';
import { PingMessage, PongMessage, PongerGrain } from './gen/protos.granary';
import { typeNameOf } from '@granary/codegen/runtime';

/**
 * The Ponger grain (Proto.Actor's `ponger` in "Messaging with a Grain"): the rpc `ping`
 * answers a pong with the same count; a plain PingMessage (not an rpc) is answered with a
 * PongMessage to its sender by `receiveDefault`. Activation and deactivation are logged with
 * the grain's identity and activation id, so passivation and failover show in the demo.
 */
export class Ponger extends PongerGrain {
  private grain = '';
  private activationId = '';

  constructor(private readonly log: Logger) {
    super();
  }

  override onActivate(ctx: GrainContext): void {
    this.grain = `${ctx.kind}/${ctx.identity}`;
    this.activationId = ctx.activationId;
    this.log.info({ grain: this.grain, activation: this.activationId }, 'activated');
  }

  override onDeactivate(reason: string): void {
    this.log.info({ grain: this.grain, activation: this.activationId, reason }, 'deactivated');
  }

  override ping(request: PingMessage): PongMessage {
    return { cnt: String(request.cnt) };
  }

  override receiveDefault(ctx: GrainContext): void {
    const message = ctx.message;
    if (typeNameOf(message) !== PingMessage.typeName) {
      this.log.warn({ grain: this.grain, type: typeNameOf(message) ?? typeof message }, 'ignored');
      return;
    }
    // A decoded uint64 may be a Long or a string: String() gives the decimal text either way.
    const cnt = String((message as PingMessage).cnt);
    ctx.respond(PongMessage.create({ cnt }));
  }
}

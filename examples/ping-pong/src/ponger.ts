import { InconsistentStateError, PersistentState, jsonStateCodec } from '@granary/cluster';
import type { GrainContext, StateStore } from '@granary/cluster';
import type { Logger } from '@granary/core';
import { typeNameOf } from '@granary/codegen/runtime';
import { PingMessage, PongMessage, PongerGrain } from './gen/protos.granary';

/** What a ponger grain keeps in Redis (with GRANARY_REDIS): how many pings it answered. */
export interface PongerState {
  answered: number;
}

const stateCodec = jsonStateCodec<PongerState>({
  validate: (v) => {
    const answered = (v as Partial<PongerState> | null)?.answered;
    if (typeof answered !== 'number') throw new TypeError('ponger state needs a numeric answered');
    return { answered };
  },
});

/**
 * The Ponger grain (Proto.Actor's `ponger` in "Messaging with a Grain"): the rpc `ping`
 * answers a pong with the same count; a plain PingMessage (not an rpc) is answered with a
 * PongMessage to its sender by `receiveDefault`. Activation and deactivation are logged with
 * the grain's identity, activation id and answered count, so passivation and failover show in
 * the demo. With a state store the count is written (fenced by the shard epoch) on every pong,
 * so it survives passivation and the death of the node.
 */
export class Ponger extends PongerGrain {
  private grain = '';
  private activationId = '';
  private answered = 0;
  private state: PersistentState<PongerState> | undefined;

  constructor(
    private readonly log: Logger,
    private readonly store?: StateStore,
  ) {
    super();
  }

  override async onActivate(ctx: GrainContext): Promise<void> {
    this.grain = `${ctx.kind}/${ctx.identity}`;
    this.activationId = ctx.activationId;
    if (this.store !== undefined) {
      this.state = new PersistentState({
        store: this.store,
        kind: ctx.kind,
        id: ctx.identity,
        codec: stateCodec,
        epoch: () => ctx.epoch,
        initial: () => ({ answered: 0 }),
      });
      await this.state.load(ctx.deadline);
      this.answered = this.state.state.answered;
    }
    this.log.info(
      { grain: this.grain, activation: this.activationId, answered: this.answered },
      'activated',
    );
  }

  override onDeactivate(reason: string): void {
    this.log.info(
      { grain: this.grain, activation: this.activationId, reason, answered: this.answered },
      'deactivated',
    );
  }

  override async ping(request: PingMessage, ctx: GrainContext): Promise<PongMessage> {
    await this.count(ctx);
    return { cnt: String(request.cnt) };
  }

  override async receiveDefault(ctx: GrainContext): Promise<void> {
    const message = ctx.message;
    if (typeNameOf(message) !== PingMessage.typeName) {
      this.log.warn({ grain: this.grain, type: typeNameOf(message) ?? typeof message }, 'ignored');
      return;
    }
    await this.count(ctx);
    // A decoded uint64 may be a Long or a string: String() gives the decimal text either way.
    ctx.respond(PongMessage.create({ cnt: String((message as PingMessage).cnt) }));
  }

  /** One more ping answered; stored before the pong goes out when there is a store. */
  private async count(ctx: GrainContext): Promise<void> {
    if (this.state === undefined) {
      this.answered++;
      return;
    }
    this.state.state = { answered: this.state.state.answered + 1 };
    try {
      await this.state.write();
    } catch (err) {
      // Another activation wrote since we loaded (we lost the shard): step aside; the next
      // call activates again and loads the winner's count.
      if (InconsistentStateError.is(err)) ctx.deactivate();
      throw err;
    }
    this.answered = this.state.state.answered;
  }
}

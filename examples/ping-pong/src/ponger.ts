import {
  jsonStateCodec,
  type GrainContext,
  type KindStateOptions,
  type StateStore,
} from '@granary/cluster';
import type { Logger } from '@granary/core';
import { typeNameOf } from '@granary/codegen/runtime';
import { PingMessage, PongMessage, PongerGrain } from './gen/protos.granary';

/** What a ponger grain keeps in Redis (with GRANARY_REDIS): how many pings it answered. */
export interface PongerState {
  answered: number;
}

/** The ponger kind's declared state: the runtime loads, fences and writes it. */
export function pongerState(store: StateStore): KindStateOptions<PongerState> {
  return {
    store,
    initial: () => ({ answered: 0 }),
    codec: jsonStateCodec<PongerState>({
      validate: (v) => {
        const answered = (v as Partial<PongerState> | null)?.answered;
        if (typeof answered !== 'number')
          throw new TypeError('ponger state needs a numeric answered');
        return { answered };
      },
    }),
  };
}

/**
 * The Ponger grain (Proto.Actor's `ponger` in "Messaging with a Grain"): the rpc `ping`
 * answers a pong with the same count; a plain PingMessage (not an rpc) is answered with a
 * PongMessage to its sender by `receiveDefault`. Activation and deactivation are logged with
 * the grain's identity, activation id and answered count, so passivation and failover show in
 * the demo. With a state store (declared on the kind, `pongerState`) the count is written,
 * fenced by the shard epoch, on every pong, so it survives passivation and the death of the
 * node; a conflicting write deactivates the grain and reaches the caller by itself.
 */
export class Ponger extends PongerGrain<PongerState> {
  private grain = '';
  private activationId = '';
  /** The count without a store (with one, `this.state.answered`). */
  private answeredHere = 0;

  constructor(
    private readonly log: Logger,
    private readonly persistent = false,
  ) {
    super();
  }

  override onActivate(ctx: GrainContext): void {
    this.grain = `${ctx.kind}/${ctx.identity}`;
    this.activationId = ctx.activationId;
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

  override async ping(request: PingMessage): Promise<PongMessage> {
    await this.count();
    return { cnt: String(request.cnt) };
  }

  override async receiveDefault(ctx: GrainContext): Promise<void> {
    const message = ctx.message;
    if (typeNameOf(message) !== PingMessage.typeName) {
      this.log.warn({ grain: this.grain, type: typeNameOf(message) ?? typeof message }, 'ignored');
      return;
    }
    await this.count();
    // A decoded uint64 may be a Long or a string: String() gives the decimal text either way.
    ctx.respond(PongMessage.create({ cnt: String((message as PingMessage).cnt) }));
  }

  private get answered(): number {
    return this.persistent ? this.state.answered : this.answeredHere;
  }

  /** One more ping answered; stored before the pong goes out when there is a store. */
  private async count(): Promise<void> {
    if (!this.persistent) {
      this.answeredHere++;
      return;
    }
    this.state.answered++;
    await this.writeState();
  }
}

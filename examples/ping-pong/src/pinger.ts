import type { Cluster } from '@granary/cluster';
import { Started, Stopping } from '@granary/core';
import type { Actor, Context, Logger } from '@granary/core';
import { typeNameOf } from '@granary/codegen/runtime';
import { PingMessage, PongMessage, PongerClient, PongerGrain } from './gen/protos.granary';

/** What the pinger needs to know. */
export interface PingerOptions {
  /** Identity of the ponger grain (`ponger-1`). */
  pongerId: string;
  /** Time between pings, ms. */
  intervalMs: number;
  /** Deadline of one ping, retries included, ms. */
  deadlineMs: number;
}

/** The pinger's own clock tick; never leaves the node. */
class Tick {}

/**
 * The pinger actor (Proto.Actor's pinger): every `intervalMs` it calls grain `ponger-1`
 * through the generated client (an rpc retried inside its deadline) and also sends it a plain
 * PingMessage with itself as sender, which the grain's `receiveDefault` answers with a
 * PongMessage straight to this actor. The rpc runs with `reenterAfter` and the send does not
 * wait, so a slow pong (failover) never blocks the next tick. Each pong is logged
 * as `pong cnt=N via=rpc|message from=<member>`, the member being the owner of the grain's shard
 * when the pong arrives (the pong itself carries only the count, as in the Go original).
 */
export class Pinger implements Actor {
  private count = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly cluster: Cluster,
    private readonly options: PingerOptions,
    private readonly log: Logger,
  ) {}

  receive(ctx: Context): void {
    const message = ctx.message;
    if (message instanceof Started) {
      const self = ctx.self;
      const root = ctx.system.root;
      this.timer = setInterval(() => root.send(self, new Tick()), this.options.intervalMs);
    } else if (message instanceof Stopping) {
      clearInterval(this.timer);
    } else if (message instanceof Tick) {
      this.ping(ctx);
    } else if (typeNameOf(message) === PongMessage.typeName) {
      // The grain's receiveDefault answering our plain send (we were its ctx.sender).
      this.onPong(message as PongMessage, 'message');
    }
  }

  private onPong(pong: PongMessage, via: 'rpc' | 'message', ms?: number): void {
    if (typeNameOf(pong) !== undefined && typeNameOf(pong) !== PongMessage.typeName) {
      this.log.warn({ via, type: typeNameOf(pong) }, 'unexpected reply');
      return;
    }
    // A decoded uint64 may be a Long or a string: String() gives the decimal text either way.
    const cnt = String(pong.cnt);
    this.log.info({ cnt, via, from: this.ownerOfPonger(), ms }, 'pong');
  }

  private ping(ctx: Context): void {
    const cnt = String(++this.count);
    const started = Date.now();
    const client = PongerClient.for(this.cluster, this.options.pongerId);
    const call = client.ping(
      { cnt },
      // Retried by the cluster inside the deadline; idempotent: after a failover a ping may
      // reach the grain twice, which only counts it twice.
      { timeoutMs: this.options.deadlineMs, idempotent: true },
    );
    ctx.reenterAfter(call, (pong, error) => {
      if (error !== undefined || pong === undefined) {
        this.log.warn({ cnt, error }, 'ping failed');
        return;
      }
      this.onPong(pong, 'rpc', Date.now() - started);
    });
    // A plain send with this actor as its sender: the grain's receiveDefault answers with a
    // PongMessage that arrives in receive() like any message (delivery is retried by the
    // cluster inside its default deadline; a send that still fails is logged there).
    this.cluster.send(PongerGrain.kindName, this.options.pongerId, PingMessage.create({ cnt }), {
      sender: ctx.self,
    });
  }

  /** Member that owns the ponger grain's shard in the current topology. */
  private ownerOfPonger(): string {
    const kind = PongerGrain.kindName;
    const owner = this.cluster.ownerOf(kind, this.cluster.shardOf(kind, this.options.pongerId));
    return owner?.id ?? 'unknown';
  }
}

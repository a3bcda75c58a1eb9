import type { Cluster } from '@granary/cluster';
import { Started, Stopping } from '@granary/core';
import type { Actor, Context, Logger, PID } from '@granary/core';
import { typeNameOf } from '@granary/codegen/runtime';
import { PingMessage, PongMessage, PongerClient, PongerGrain } from './gen/protos.granary';

/** Attempts a ping may take inside its deadline: enough to ride out a failover. */
const PING_RETRIES = 20;
/** Deadline of one attempt: a dead node's pending call fails fast, a paused one times out. */
const ATTEMPT_TIMEOUT_MS = 1_000;

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
 * PingMessage, which the grain answers with a PongMessage to this actor. Each pong is logged
 * with the node that answered: for the plain message the sender's address, exactly; for the
 * rpc the member that owns the grain's shard when the reply arrives.
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
      const cnt = String((message as PongMessage).cnt);
      this.log.info({ cnt, via: 'message', node: this.memberAt(ctx.sender) }, 'pong');
    }
  }

  private ping(ctx: Context): void {
    const cnt = String(++this.count);
    const started = Date.now();
    const client = PongerClient.get(this.cluster, this.options.pongerId);
    const call = client.ping(
      { cnt },
      {
        timeoutMs: ATTEMPT_TIMEOUT_MS,
        retries: PING_RETRIES,
        signal: AbortSignal.timeout(this.options.deadlineMs),
      },
    );
    ctx.reenterAfter(call, (pong, error) => {
      if (error !== undefined || pong === undefined) {
        this.log.warn({ cnt, error }, 'ping failed');
        return;
      }
      const node = this.ownerOfPonger();
      this.log.info({ cnt: pong.cnt, via: 'rpc', node, ms: Date.now() - started }, 'pong');
    });
    this.cluster.send(PongerGrain.kindName, this.options.pongerId, PingMessage.create({ cnt }));
  }

  /** Member id of the node at `pid`'s address. */
  private memberAt(pid: PID | undefined): string {
    if (pid === undefined) return 'unknown';
    const member = this.cluster.topology.members.find((m) => m.address === pid.address);
    return member?.id ?? pid.address;
  }

  /** Member that owns the ponger grain's shard in the current topology. */
  private ownerOfPonger(): string {
    const kind = PongerGrain.kindName;
    const owner = this.cluster.ownerOf(kind, this.cluster.shardOf(kind, this.options.pongerId));
    return owner?.id ?? 'unknown';
  }
}

import type { Actor, Context, Producer, ReceiveFunc } from './context';
import { InvalidArgumentError, InvalidOptionError } from './errors';
import { DEFAULT_MAILBOX_OPTIONS, type MailboxOptions } from './mailbox';
import {
  makeReceiveChain,
  makeSenderChain,
  type ReceiveMiddleware,
  type SenderFunc,
  type SenderMiddleware,
} from './middleware';
import type { PID } from './pid';
import type { SupervisorStrategy } from './supervision/supervisor-strategy';

/** Options of Props. */
export interface PropsOptions {
  /**
   * Mailbox bound (user lanes).
   * @default { capacity: Infinity }
   */
  mailbox?: MailboxOptions;
  /**
   * How this actor supervises its children.
   * @default DEFAULT_SUPERVISOR_STRATEGY (one-for-one, restart, 10 retries in 10 s)
   */
  supervisor?: SupervisorStrategy;
  /**
   * Wrap receive, run in registration order (the first is outermost).
   * @default []
   */
  receiveMiddleware?: ReceiveMiddleware[];
  /**
   * Wrap outgoing sends, run in registration order.
   * @default []
   */
  senderMiddleware?: SenderMiddleware[];
}

/** The actor's own receive, behind the middleware (calls the current behavior). */
const invokeActor: ReceiveFunc = (ctx) =>
  (ctx as unknown as { invokeActor(): void | Promise<void> }).invokeActor();

/** The last sender in a sender chain: the actual delivery. */
const deliverEnvelope: SenderFunc = (ctx, target, envelope) =>
  (ctx as unknown as { deliverEnvelope: SenderFunc }).deliverEnvelope(ctx, target, envelope);

/**
 * How to make an actor: a producer (called on spawn and on each restart) and its options.
 * Props are immutable and shareable; middleware chains are built once here, not per actor.
 *
 * @example
 * const props = Props.fromFunc((ctx) => { if (typeof ctx.message === 'number') ctx.respond(ctx.message + 1); });
 * const pid = system.root.spawn(props);
 * await system.root.request(pid, 41); // 42
 */
export class Props {
  /** Bound of the user lanes. */
  readonly capacity: number;
  readonly supervisor: SupervisorStrategy | undefined;
  readonly receiveMiddleware: readonly ReceiveMiddleware[];
  readonly senderMiddleware: readonly SenderMiddleware[];
  /** @internal */
  readonly receiveChain: ReceiveFunc | undefined;
  /** @internal */
  readonly senderChain: SenderFunc | undefined;

  private constructor(
    /** Makes a fresh instance. */
    readonly producer: Producer,
    readonly options: PropsOptions,
  ) {
    const capacity = options.mailbox?.capacity ?? DEFAULT_MAILBOX_OPTIONS.capacity;
    if (!(capacity === Infinity || (Number.isInteger(capacity) && capacity >= 1))) {
      throw new InvalidOptionError('mailbox.capacity', `${capacity} is not an integer >= 1`);
    }
    this.capacity = capacity;
    this.supervisor = options.supervisor;
    this.receiveMiddleware = [...(options.receiveMiddleware ?? [])];
    this.senderMiddleware = [...(options.senderMiddleware ?? [])];
    this.receiveChain = makeReceiveChain(this.receiveMiddleware, invokeActor);
    this.senderChain = makeSenderChain(this.senderMiddleware, deliverEnvelope);
  }

  /** An actor instance from `producer()` (a class instance with `receive`). */
  static fromProducer(producer: Producer, options: PropsOptions = {}): Props {
    if (typeof producer !== 'function') {
      throw new InvalidArgumentError('producer', 'Props.fromProducer needs a function');
    }
    return new Props(producer, options);
  }

  /** An actor that is just a function; all its instances share it (no per-actor object). */
  static fromFunc(receive: (ctx: Context) => void | Promise<void>, options: PropsOptions = {}) {
    if (typeof receive !== 'function') {
      throw new InvalidArgumentError('receive', 'Props.fromFunc needs a function');
    }
    const actor: Actor = { receive };
    return new Props(() => actor, options);
  }

  /** A copy with options merged over these (middleware lists are replaced, not appended). */
  with(options: PropsOptions): Props {
    return new Props(this.producer, { ...this.options, ...options });
  }
}

/** Spawning and stopping, shared by the root context and actor contexts. */
export interface SpawnerContext {
  /** Starts an actor (a child, inside an actor) with a generated id. */
  spawn(props: Props): PID;
  /** Starts an actor with a chosen name; a taken name throws NameExistsError. */
  spawnNamed(props: Props, name: string): PID;
  /** Stops `pid` after its current message (system lane: ahead of its queued messages). */
  stop(pid: PID): void;
  /** Stops `pid` after the messages already queued (a PoisonPill in its user lane). */
  poison(pid: PID): void;
}

// Every actor's Context can spawn: declared here, with Props, so context.ts need not import it.
declare module './context' {
  // An empty merge on purpose: it adds SpawnerContext's members to Context.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface Context extends SpawnerContext {}
}

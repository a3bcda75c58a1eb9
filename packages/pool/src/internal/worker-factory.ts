import {
  Props,
  ReceiveTimeout,
  Restarting,
  Started,
  Stopped,
  Stopping,
  Terminated,
  type Actor,
  type PID,
  type ReceiveMiddleware,
} from '@granary/core';

/**
 * A worker's place in the pool. A replacement of a dead worker takes the same slot, so it
 * keeps the slot's hash key (consistent-hash affinity) and its position in the rotation.
 */
export class Slot {
  pid!: PID;
  /** Messages forwarded to this worker that it has not started yet (least-busy only). */
  load = 0;
  /** Hash key of the slot, stable across replacements. */
  readonly key: number;

  constructor(index: number) {
    this.key = index;
  }
}

function isLifecycle(message: unknown): boolean {
  return (
    message instanceof Started ||
    message instanceof Stopping ||
    message instanceof Stopped ||
    message instanceof Restarting ||
    message instanceof ReceiveTimeout ||
    message instanceof Terminated
  );
}

/**
 * Makes worker Props from the pool's `workerProps` (Props or a factory of `workerArgs`), with
 * the mailbox bound set to `workerMailboxSize`. When the strategy reads load, each slot's
 * workers get a receive middleware that counts down the slot's `load` as a forwarded message
 * starts, so `load` is the number of forwarded messages waiting in that mailbox.
 */
export class WorkerFactory {
  /** Class name of the first worker made (for inspect's `worker_behavior`). */
  behaviorName = 'unknown';
  private readonly producer: () => Actor;
  private readonly shared: Props | undefined;
  private readonly base: Props | undefined;

  constructor(
    workerProps: Props | ((args: unknown) => Actor),
    workerArgs: unknown,
    readonly mailboxSize: number,
    readonly tracksLoad: boolean,
  ) {
    const make =
      workerProps instanceof Props ? workerProps.producer : () => workerProps(workerArgs);
    this.base = workerProps instanceof Props ? workerProps : undefined;
    this.producer = () => {
      const actor = make();
      if (this.behaviorName === 'unknown') this.behaviorName = actor?.constructor?.name ?? 'Object';
      return actor;
    };
    this.shared = tracksLoad ? undefined : this.build([]);
  }

  /** Props for a worker in `slot`. */
  propsFor(slot: Slot): Props {
    if (this.shared !== undefined) return this.shared;
    const countDown: ReceiveMiddleware = (next) => (ctx) => {
      if (slot.load > 0 && !isLifecycle(ctx.message)) slot.load--;
      return next(ctx);
    };
    return this.build([countDown]);
  }

  private build(extra: ReceiveMiddleware[]): Props {
    const options = this.base?.options ?? {};
    return Props.fromProducer(this.producer, {
      ...options,
      mailbox: { capacity: this.mailboxSize },
      receiveMiddleware: [...(options.receiveMiddleware ?? []), ...extra],
    });
  }
}

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
import type { LocalProcess } from '@granary/core/internal';

/**
 * A worker's place in the pool. A replacement of a dead worker takes the same slot, so it
 * keeps the slot's hash key (consistent-hash affinity) and its position in the rotation.
 */
export class Slot {
  pid!: PID;
  /** What the registry answered for `pid` when the worker was spawned. */
  process!: LocalProcess;
  /** Messages forwarded to this worker that it has not finished (least-busy only). */
  load = 0;
  /** Bumped per worker spawned in the slot, so a dead worker's late count-down is ignored. */
  generation = 0;
  /** Hash key of the slot, stable across replacements. */
  readonly key: number;

  constructor(index: number) {
    this.key = index;
  }
}

function isLifecycle(message: unknown): boolean {
  if (typeof message !== 'object' || message === null) return false;
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
 * the mailbox bound set to `workerMailboxSize`. When the strategy reads load, each worker gets
 * a receive middleware that counts its slot's `load` down when a message is finished (an
 * async receive when its promise settles), so `load` is the worker's outstanding messages:
 * queued plus in progress. A worker at 0 is free, as a free element of `AsyncPool`.
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

  /** Props for the next worker of `slot` (a fresh generation of its load count). */
  propsFor(slot: Slot): Props {
    if (this.shared !== undefined) return this.shared;
    const generation = ++slot.generation;
    const done = (): void => {
      if (slot.generation === generation && slot.load > 0) slot.load--;
    };
    const countDown: ReceiveMiddleware = (next) => (ctx) => {
      if (isLifecycle(ctx.message)) return next(ctx);
      let result: void | Promise<void>;
      try {
        result = next(ctx);
      } catch (err) {
        done();
        throw err;
      }
      if (result === undefined) done();
      else result = result.then(done, (err: unknown) => (done(), Promise.reject(err)));
      return result;
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

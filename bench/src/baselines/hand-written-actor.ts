/**
 * The in-process baseline every core benchmark is compared with: the least an actor can be on
 * one event loop. An array-backed queue with a moving head, and a drain loop scheduled once per
 * burst as a microtask (the cheapest hop Node has). No lanes, no supervision, no registry, no
 * yielding to I/O: a real runtime must pay for those, which is why targets are ratios below 1.
 */
export class HandWrittenActor<T> {
  private queue: T[] = [];
  private head = 0;
  private scheduled = false;

  constructor(private readonly receive: (message: T) => void) {}

  tell(message: T): void {
    this.queue.push(message);
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(this.drain);
    }
  }

  private drain = (): void => {
    const queue = this.queue;
    while (this.head < queue.length) this.receive(queue[this.head++]!);
    this.queue = [];
    this.head = 0;
    this.scheduled = false;
  };
}

/** A request: the message and the callback that settles the caller's promise. */
export interface HandWrittenRequest<T, R> {
  message: T;
  reply: (response: R) => void;
}

/** Request/response on the hand-written actor: the reply settles a promise. */
export function handWrittenRequest<T, R>(
  actor: HandWrittenActor<HandWrittenRequest<T, R>>,
  message: T,
): Promise<R> {
  return new Promise((resolve) => actor.tell({ message, reply: resolve }));
}

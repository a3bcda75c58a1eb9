/** Initial slots: the ready queue of a quiet system stays this small. */
const INITIAL_CAPACITY = 16;

/**
 * FIFO ring buffer over a power-of-two array that doubles when full: O(1) push/shift with no
 * per-item allocation and no array shifting.
 */
export class RingQueue<T> {
  private buffer: (T | undefined)[] = new Array<T | undefined>(INITIAL_CAPACITY);
  private head = 0;
  private mask = INITIAL_CAPACITY - 1;
  length = 0;

  push(item: T): void {
    if (this.length > this.mask) this.grow();
    this.buffer[(this.head + this.length) & this.mask] = item;
    this.length++;
  }

  /** The oldest item, or undefined when empty. */
  shift(): T | undefined {
    if (this.length === 0) return undefined;
    const item = this.buffer[this.head];
    this.buffer[this.head] = undefined;
    this.head = (this.head + 1) & this.mask;
    this.length--;
    return item;
  }

  /** Removes and returns every item, oldest first. */
  drain(): T[] {
    const out: T[] = [];
    for (let item = this.shift(); item !== undefined; item = this.shift()) out.push(item);
    return out;
  }

  private grow(): void {
    const old = this.buffer;
    const capacity = old.length * 2;
    const next = new Array<T | undefined>(capacity);
    for (let i = 0; i < this.length; i++) next[i] = old[(this.head + i) & this.mask];
    this.buffer = next;
    this.head = 0;
    this.mask = capacity - 1;
  }
}

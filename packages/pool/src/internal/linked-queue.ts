/** A node of a {@link LinkedQueue}; keep it to remove the entry in O(1). */
export interface QueueNode<T> {
  readonly value: T;
  prev: QueueNode<T> | undefined;
  next: QueueNode<T> | undefined;
  /** False once removed, so a second removal is a no-op. */
  linked: boolean;
}

/**
 * FIFO queue with O(1) push, shift and removal from the middle. Waiters leave the middle of the
 * queue when they time out or are aborted, which an array would make O(n).
 */
export class LinkedQueue<T> {
  private head: QueueNode<T> | undefined;
  private tail: QueueNode<T> | undefined;
  private count = 0;

  /** Number of entries. */
  get length(): number {
    return this.count;
  }

  /** Appends `value` at the tail and returns its node. */
  push(value: T): QueueNode<T> {
    const node: QueueNode<T> = { value, prev: this.tail, next: undefined, linked: true };
    if (this.tail) this.tail.next = node;
    else this.head = node;
    this.tail = node;
    this.count++;
    return node;
  }

  /** Removes and returns the head, or `undefined` when empty. */
  shift(): T | undefined {
    const node = this.head;
    if (!node) return undefined;
    this.remove(node);
    return node.value;
  }

  /** The head without removing it. */
  peek(): T | undefined {
    return this.head?.value;
  }

  /** Unlinks `node`; removing a node twice is a no-op. */
  remove(node: QueueNode<T>): void {
    if (!node.linked) return;
    node.linked = false;
    if (node.prev) node.prev.next = node.next;
    else this.head = node.next;
    if (node.next) node.next.prev = node.prev;
    else this.tail = node.prev;
    node.prev = node.next = undefined;
    this.count--;
  }

  /** Removes every entry and returns them head first. */
  drain(): T[] {
    const out: T[] = [];
    for (let node = this.head; node; node = this.head) {
      this.remove(node);
      out.push(node.value);
    }
    return out;
  }
}

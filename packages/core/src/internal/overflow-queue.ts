/**
 * The overflow of a flooded user lane (see Mailbox): a FIFO over a linked list of fixed
 * chunks, so a backlog of any size is never copied and never one huge array.
 */

/** Slots per overflow chunk (8 KB: allocated in the young generation, not as a large object). */
const CHUNK_SLOTS = 1024;

/** One fixed block of a flooded lane. */
class Chunk {
  readonly items = new Array<unknown>(CHUNK_SLOTS);
  next: Chunk | null = null;
}

/**
 * The entries that arrived while the ring was full, FIFO over a linked list of chunks. Every
 * one is newer than every entry in the ring, so the ring drains first. Allocated only when a
 * lane floods; dropped once it drains.
 */
export class OverflowQueue {
  private head = new Chunk();
  private tail = this.head;
  private read = 0;
  private write = 0;
  /** A drained chunk kept for the next one needed (a steady backlog allocates nothing). */
  private spare: Chunk | null = null;
  count = 0;

  push(entry: unknown): void {
    if (this.write === CHUNK_SLOTS) {
      const c = this.spare ?? new Chunk();
      this.spare = null;
      this.tail = this.tail.next = c;
      this.write = 0;
    }
    this.tail.items[this.write++] = entry;
    this.count++;
  }

  /** The oldest entry; only called when count > 0. */
  shift(): unknown {
    let head = this.head;
    if (this.read === CHUNK_SLOTS) {
      const drained = head;
      head = this.head = head.next!;
      drained.next = null;
      this.spare = drained;
      this.read = 0;
    }
    const entry = head.items[this.read];
    head.items[this.read++] = undefined;
    this.count--;
    return entry;
  }
}

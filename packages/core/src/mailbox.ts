import { OverflowQueue } from './internal/overflow-queue';
import { PoisonPill } from './messages';

/**
 * First allocation of a user lane: most actors never hold more than a few messages, and the
 * spawn benchmark's bytes-per-actor target counts this array for every actor.
 */
const INITIAL_LANE_SLOTS = 2;

/** Shared by every lane that has never held a message (length 0: the first push grows it). */
const NO_SLOTS: unknown[] = [];

/**
 * The ring stops doubling here; a flood spills into fixed chunks instead. Doubling a ring to
 * 1M slots allocated (and page-faulted) 16 MB of large arrays and copied every entry 20 times;
 * chunks are never copied, and the memory is given back as the flood drains.
 */
const RING_MAX_SLOTS = 1024;

/** Options of an actor's mailbox. */
export interface MailboxOptions {
  /**
   * Bound of the user lanes (urgent + ordinary user messages together); system messages are
   * never bounded. When full, `send` dead-letters with reason `mailbox-full`, `trySend`
   * returns false and `request` rejects with `MailboxFullError`.
   * @default Infinity
   */
  capacity?: number;
}

/** Defaults of {@link MailboxOptions}. */
export const DEFAULT_MAILBOX_OPTIONS: Required<MailboxOptions> = { capacity: Infinity };

/**
 * Three FIFO lanes, always drained in this order: system (lifecycle, watch, stop), urgent
 * (priority user messages), user. The user lane is a ring buffer over a power-of-two array
 * that doubles when full, up to RING_MAX_SLOTS; beyond that, entries spill into an overflow
 * of fixed chunks. Push and shift are a store and an index bump, with no allocation in
 * steady state (an actor that drains after every message reuses its slots). Urgent and
 * system lanes are short and rare: plain arrays, null when empty. An idle actor holds no
 * timer, promise or closure. Every local actor IS a mailbox (its cell extends this class):
 * one object less per actor.
 */
export class Mailbox {
  private slots: unknown[] = NO_SLOTS;
  private head = 0;
  /** Entries in the ring (the overflow counts its own). */
  private count = 0;
  private overflow: OverflowQueue | null = null;
  private urgentLane: unknown[] | null = null;
  private sysLane: unknown[] | null = null;

  constructor(readonly capacity: number = Infinity) {}

  /** Queued user + urgent messages. */
  get userCount(): number {
    return (
      this.count +
      (this.overflow === null ? 0 : this.overflow.count) +
      (this.urgentLane === null ? 0 : this.urgentLane.length)
    );
  }

  /** Queued system messages. */
  get systemCount(): number {
    return this.sysLane === null ? 0 : this.sysLane.length;
  }

  /** Enqueues an ordinary user message; false (nothing enqueued) when the lanes are full. */
  pushUser(entry: unknown): boolean {
    // A PoisonPill is never refused: stopping a flooded actor must always be possible.
    if (
      this.capacity !== Infinity &&
      this.userCount >= this.capacity &&
      !(entry instanceof PoisonPill)
    ) {
      return false;
    }
    if (this.overflow !== null) {
      // Older entries wait in the overflow: this one goes behind them.
      this.overflow.push(entry);
      return true;
    }
    let slots = this.slots;
    if (this.count === slots.length) {
      if (slots.length === RING_MAX_SLOTS) {
        (this.overflow = new OverflowQueue()).push(entry);
        return true;
      }
      slots = this.grow();
    }
    slots[(this.head + this.count) & (slots.length - 1)] = entry;
    this.count++;
    return true;
  }

  /** Enqueues a priority user message; false when the lanes are full. */
  pushUrgent(entry: unknown): boolean {
    if (this.capacity !== Infinity && this.userCount >= this.capacity) return false;
    (this.urgentLane ??= []).push(entry);
    return true;
  }

  /** Enqueues a system message (unbounded: control must never be refused). */
  pushSystem(message: unknown): void {
    (this.sysLane ??= []).push(message);
  }

  /** Puts entries back in front of the user lane, in their order (unstash). */
  prependUser(entries: unknown[]): void {
    if (entries.length === 0) return;
    const rest = this.drainLane();
    for (const e of entries) this.pushUser(e);
    for (const e of rest) this.pushUser(e);
  }

  hasSystem(): boolean {
    return this.sysLane !== null;
  }

  hasUser(): boolean {
    return this.count !== 0 || this.urgentLane !== null || this.overflow !== null;
  }

  /** The next system message, or undefined. */
  shiftSystem(): unknown {
    const lane = this.sysLane;
    if (lane === null) return undefined;
    const message = lane.shift();
    if (lane.length === 0) this.sysLane = null;
    return message;
  }

  /** The next user entry (urgent lane first), or undefined when both are empty. */
  shiftUser(): unknown {
    const urgent = this.urgentLane;
    if (urgent !== null) {
      const entry = urgent.shift();
      if (urgent.length === 0) this.urgentLane = null;
      return entry;
    }
    return this.shiftLane();
  }

  /** Removes and returns every queued user entry (urgent first), e.g. to dead-letter them. */
  drainUser(): unknown[] {
    const out = this.urgentLane ?? [];
    this.urgentLane = null;
    for (const e of this.drainLane()) out.push(e);
    return out;
  }

  /** The next entry of the user lane (ring, then overflow), or undefined when empty. */
  private shiftLane(): unknown {
    if (this.count !== 0) {
      const slots = this.slots;
      const head = this.head;
      const entry = slots[head];
      slots[head] = undefined;
      this.head = (head + 1) & (slots.length - 1);
      this.count--;
      return entry;
    }
    const overflow = this.overflow;
    if (overflow === null) return undefined;
    const entry = overflow.shift();
    // Drained: its chunks go back to the heap, and pushes use the ring again.
    if (overflow.count === 0) this.overflow = null;
    return entry;
  }

  private drainLane(): unknown[] {
    const out: unknown[] = [];
    while (this.count !== 0 || this.overflow !== null) out.push(this.shiftLane());
    this.head = 0;
    return out;
  }

  private grow(): unknown[] {
    const old = this.slots;
    const next = new Array<unknown>(old.length === 0 ? INITIAL_LANE_SLOTS : old.length * 2);
    const mask = old.length - 1;
    for (let i = 0; i < this.count; i++) next[i] = old[(this.head + i) & mask];
    this.slots = next;
    this.head = 0;
    return next;
  }
}

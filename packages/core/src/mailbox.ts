import { PoisonPill } from './messages';

/**
 * Compact a lane once this many consumed slots sit at its head and they are more than half
 * of it: amortised O(1) and bounded memory for a lane that never fully drains.
 */
const COMPACT_AFTER = 4096;

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
 * (priority user messages), user. The user lane is a head-indexed array: `push` is a native
 * array push, `shift` a read and a head bump; a drained lane is reset, so an idle actor keeps
 * an empty array and no timer, promise or closure. Every local actor IS a mailbox (its cell
 * extends this class): one object less per actor.
 */
export class Mailbox {
  private userLane: unknown[] = [];
  private userHead = 0;
  /** Urgent and system lanes are short and rare: plain arrays, shifted, null when empty. */
  private urgentLane: unknown[] | null = null;
  private sysLane: unknown[] | null = null;

  constructor(readonly capacity: number = Infinity) {}

  /** Queued user + urgent messages. */
  get userCount(): number {
    return (
      this.userLane.length - this.userHead + (this.urgentLane === null ? 0 : this.urgentLane.length)
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
    // Compact on the producer side only: a lane draining to empty is reset for free, and a
    // lane that never empties is compacted in place (copyWithin, no allocation).
    const head = this.userHead;
    if (head >= COMPACT_AFTER && head * 2 > this.userLane.length) {
      const lane = this.userLane;
      lane.copyWithin(0, head);
      lane.length -= head;
      this.userHead = 0;
    }
    this.userLane.push(entry);
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
    this.userLane = entries.concat(this.userLane.slice(this.userHead));
    this.userHead = 0;
  }

  hasSystem(): boolean {
    return this.sysLane !== null;
  }

  hasUser(): boolean {
    return this.urgentLane !== null || this.userLane.length !== 0;
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
    if (this.urgentLane !== null) {
      const lane = this.urgentLane;
      const entry = lane.shift();
      if (lane.length === 0) this.urgentLane = null;
      return entry;
    }
    const lane = this.userLane;
    const head = this.userHead;
    if (head === lane.length) return undefined;
    const entry = lane[head];
    if (head + 1 === lane.length) {
      lane.length = 0;
      this.userHead = 0;
    } else {
      lane[head] = undefined;
      this.userHead = head + 1;
    }
    return entry;
  }

  /** Removes and returns every queued user entry (urgent first), e.g. to dead-letter them. */
  drainUser(): unknown[] {
    const out = this.urgentLane === null ? [] : this.urgentLane;
    for (let i = this.userHead; i < this.userLane.length; i++) out.push(this.userLane[i]);
    this.urgentLane = null;
    this.userLane = [];
    this.userHead = 0;
    return out;
  }
}

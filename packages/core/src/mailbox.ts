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
 * (priority user messages), user. Each lane is a head-indexed array: `push` is a native
 * array push, `shift` a read and a head bump; a drained lane is reset, so an idle actor keeps
 * an empty array and no timer, promise or closure.
 */
export class Mailbox {
  private user: unknown[] = [];
  private userHead = 0;
  private urgent: unknown[] | null = null;
  private urgentHead = 0;
  private system: unknown[] | null = null;
  private systemHead = 0;

  constructor(readonly capacity: number = Infinity) {}

  /** Queued user + urgent messages. */
  get userCount(): number {
    return (
      this.user.length -
      this.userHead +
      (this.urgent === null ? 0 : this.urgent.length - this.urgentHead)
    );
  }

  /** Queued system messages. */
  get systemCount(): number {
    return this.system === null ? 0 : this.system.length - this.systemHead;
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
    if (head >= COMPACT_AFTER && head * 2 > this.user.length) {
      const lane = this.user;
      lane.copyWithin(0, head);
      lane.length -= head;
      this.userHead = 0;
    }
    this.user.push(entry);
    return true;
  }

  /** Enqueues a priority user message; false when the lanes are full. */
  pushUrgent(entry: unknown): boolean {
    if (this.capacity !== Infinity && this.userCount >= this.capacity) return false;
    (this.urgent ??= []).push(entry);
    return true;
  }

  /** Enqueues a system message (unbounded: control must never be refused). */
  pushSystem(message: unknown): void {
    (this.system ??= []).push(message);
  }

  /** Puts entries back in front of the user lane, in their order (unstash). */
  prependUser(entries: unknown[]): void {
    if (entries.length === 0) return;
    this.user = entries.concat(this.user.slice(this.userHead));
    this.userHead = 0;
  }

  hasSystem(): boolean {
    return this.system !== null;
  }

  hasUser(): boolean {
    return this.urgent !== null || this.user.length !== 0;
  }

  /** The next system message, or undefined. */
  shiftSystem(): unknown {
    const lane = this.system;
    if (lane === null) return undefined;
    const message = lane[this.systemHead];
    if (++this.systemHead === lane.length) {
      this.system = null;
      this.systemHead = 0;
    } else lane[this.systemHead - 1] = undefined;
    return message;
  }

  /** The next user entry (urgent lane first), or undefined when both are empty. */
  shiftUser(): unknown {
    if (this.urgent !== null) {
      const lane = this.urgent;
      const entry = lane[this.urgentHead];
      if (++this.urgentHead === lane.length) {
        this.urgent = null;
        this.urgentHead = 0;
      } else lane[this.urgentHead - 1] = undefined;
      return entry;
    }
    const lane = this.user;
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
    const out = this.urgent === null ? [] : this.urgent.slice(this.urgentHead);
    for (let i = this.userHead; i < this.user.length; i++) out.push(this.user[i]);
    this.urgent = null;
    this.urgentHead = 0;
    this.user = [];
    this.userHead = 0;
    return out;
  }
}

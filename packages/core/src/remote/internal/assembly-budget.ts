import { performance } from 'node:perf_hooks';
import { RemoteLimitError } from '../../errors';
import type { RemoteTraffic } from './remote-traffic';

/** A link's incomplete large message, as the budget sees it. */
export interface AssemblyHolder {
  /** The peer's address, for the reason given when the holder is dropped. */
  peer(): string;
  /** True while the link itself holds its peer back (its reader paused): no stall of the peer's. */
  paused(): boolean;
  /** The budget dropped the message: close the link with `error` (its memory is released). */
  drop(error: RemoteLimitError): void;
}

interface Held {
  bytes: number;
  /** performance.now() of the last chunk (or of the last sweep that found the link paused). */
  progressAt: number;
}

/** Sweeps for stalled messages at least this often, and at a quarter of the timeout when shorter. */
const MAX_SWEEP_MS = 1000;

/**
 * The memory a node's links hold in large messages not yet complete, bounded node-wide
 * (`limits.maxIncompleteMessageBytes`) and in time (`limits.incompleteMessageTimeoutMs`). A
 * link joins one large message at a time, in a buffer of the size its first chunk states, so
 * every link could otherwise hold up to `maxMessageBytes` for a chunk of one byte, and keep it
 * by never sending the last one: a peer with many links (one per stream, 16 streams per
 * connection) held gigabytes.
 *
 * A first chunk that does not fit drops the messages stalled longest (no chunk for the longest
 * time) until it does; their links are closed with RemoteLimitError, so their peers' calls
 * fail with a typed error rather than wait, and nothing they were told was delivered is lost
 * (a message is delivered only once complete). A message with no chunk for the timeout is
 * dropped the same way. Holders are kept in the order of their last chunk, so the one stalled
 * longest is the first.
 */
export class AssemblyBudget {
  private readonly held = new Map<AssemblyHolder, Held>();
  private heldBytes = 0;
  private sweeper: NodeJS.Timeout | undefined = undefined;

  constructor(
    readonly maxBytes: number,
    readonly timeoutMs: number,
    /** Where the bytes held are shown (`incompleteBytes`). */
    private readonly traffic?: RemoteTraffic,
  ) {}

  /** Bytes held now by incomplete messages. */
  get bytes(): number {
    return this.heldBytes;
  }

  /**
   * `holder` starts a message of `bytes`: makes room (dropping the messages stalled longest)
   * and counts it.
   * @throws RemoteLimitError when the message alone is over the budget.
   */
  reserve(holder: AssemblyHolder, bytes: number): void {
    this.release(holder);
    if (bytes > this.maxBytes) {
      throw new RemoteLimitError(
        'limits.maxIncompleteMessageBytes',
        `a chunked frame of ${bytes} bytes is over the ${this.maxBytes} bytes all incomplete large messages may hold`,
      );
    }
    while (this.heldBytes + bytes > this.maxBytes) {
      const [oldest, h] = this.held.entries().next().value!;
      const stalledMs = Math.round(performance.now() - h.progressAt);
      this.dropHolder(
        oldest,
        new RemoteLimitError(
          'limits.maxIncompleteMessageBytes',
          `incomplete large messages would hold ${this.heldBytes + bytes} bytes, over ${this.maxBytes}: ` +
            `dropped the ${h.bytes}-byte message from ${oldest.peer() || 'a peer'} stalled longest (no chunk for ${stalledMs} ms)`,
        ),
      );
    }
    this.held.set(holder, { bytes, progressAt: performance.now() });
    this.add(bytes);
    this.sweeper ??= setInterval(this.sweep, Math.min(MAX_SWEEP_MS, this.timeoutMs / 4));
    this.sweeper.unref();
  }

  /** A chunk of `holder`'s message arrived: it moves to the end of the order. */
  progress(holder: AssemblyHolder): void {
    const h = this.held.get(holder);
    if (h === undefined) return;
    this.held.delete(holder);
    h.progressAt = performance.now();
    this.held.set(holder, h);
  }

  /** `holder`'s message completed, or its link closed. */
  release(holder: AssemblyHolder): void {
    const h = this.held.get(holder);
    if (h === undefined) return;
    this.held.delete(holder);
    this.add(-h.bytes);
  }

  /** Stops the sweep (the node shuts down). */
  stop(): void {
    if (this.sweeper !== undefined) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  private readonly sweep = (): void => {
    const now = performance.now();
    const expired: Array<[AssemblyHolder, number]> = [];
    const paused: AssemblyHolder[] = [];
    for (const [holder, h] of this.held) {
      // A paused link does not read its peer's chunks: their absence is this node's doing.
      if (holder.paused()) paused.push(holder);
      else if (now - h.progressAt >= this.timeoutMs) expired.push([holder, now - h.progressAt]);
    }
    for (const holder of paused) this.progress(holder);
    for (const [holder, stalledMs] of expired) {
      const bytes = this.held.get(holder)?.bytes ?? 0;
      this.dropHolder(
        holder,
        new RemoteLimitError(
          'limits.incompleteMessageTimeoutMs',
          `a ${bytes}-byte large message from ${holder.peer() || 'a peer'} got no chunk for ${Math.round(stalledMs)} ms`,
        ),
      );
    }
    if (this.held.size === 0) this.stop();
  };

  private dropHolder(holder: AssemblyHolder, error: RemoteLimitError): void {
    this.release(holder);
    holder.drop(error);
  }

  private add(bytes: number): void {
    this.heldBytes += bytes;
    if (this.traffic !== undefined) this.traffic.incompleteBytes = this.heldBytes;
  }
}

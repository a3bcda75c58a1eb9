/** Most claim or release transactions one member keeps in flight while etcd answers fast. */
export const MAX_TXN_WINDOW = 4;
/**
 * A transaction answered slower than this (or not at all) means etcd is queueing: the window
 * halves. A transaction of 64 writes takes etcd a few ms when it keeps up.
 */
export const SLOW_TXN_MS = 200;

/**
 * How many transactions a member may have in flight at once: grows by one per fast answer up to
 * MAX_TXN_WINDOW, halves on a slow one, never below one (additive increase, multiplicative
 * decrease). Why: etcd applies writes in order, and a lease keep-alive waits until etcd has
 * applied what it accepted; members that pile transactions into a slow etcd (a join storm on a
 * starved host) delay every keep-alive past the lease's trust window, the members fence, and
 * their re-registration is more load: issue 24's metastable storm. Backing off when answers
 * slow down keeps etcd's queue, and so the keep-alive delay, short.
 */
export class TxnWindow {
  private current = 1;

  /** Transactions allowed in flight now. */
  get size(): number {
    return this.current;
  }

  /** A transaction was answered (or failed) after `latencyMs`. */
  answered(latencyMs: number): void {
    if (latencyMs >= SLOW_TXN_MS) this.current = Math.max(1, Math.floor(this.current / 2));
    else this.current = Math.min(MAX_TXN_WINDOW, this.current + 1);
  }
}

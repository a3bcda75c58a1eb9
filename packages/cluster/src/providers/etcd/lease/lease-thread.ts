import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import {
  HEARTBEAT_INDEX,
  MAX_LEASE_SLOTS,
  slotIndex,
  type FromLeaseThread,
  type KeepRequest,
  type LeaseThreadData,
  type ToLeaseThread,
} from './lease-protocol';

/**
 * How often the main loop beats. The thread reads the beat against maxLoopStallMs (seconds), so
 * 100 ms of resolution costs nothing and one timer per process is all the main loop pays.
 */
const HEARTBEAT_MS = 100;

/** Who owns a slot: told when the thread gives up the lease, and given its log lines. */
export interface SlotOwner {
  /** The lease id kept in the slot (a late notice about an earlier lease is ignored). */
  readonly lease: string;
  lost(cause: string): void;
  log(level: 'debug' | 'warn', msg: string, fields: Record<string, unknown>): void;
}

/**
 * The process's lease thread, seen from the main thread: one worker thread keeps every
 * EtcdProvider lease of the process alive (one long-lived keep-alive stream per etcd endpoint
 * set), so keep-alives do not wait for a busy main loop. The main loop writes a heartbeat to
 * shared memory every 100 ms; the thread keeps a lease alive only while that heartbeat is
 * younger than the lease's maxLoopStallMs, so a hung main loop still loses its lease. Each lease
 * has a slot in shared memory holding the time (main clock) until which it is trusted, so
 * `trustedUntil` is one memory read, valid even right after the main loop wakes from a stall.
 *
 * The worker starts with the first lease and stops with the last; neither it nor the heartbeat
 * keeps the process alive.
 */
export class LeaseThread {
  private static current: LeaseThread | undefined;

  /** The process's lease thread (started on first use). */
  static get(): LeaseThread {
    if (!LeaseThread.current || LeaseThread.current.dead) LeaseThread.current = new LeaseThread();
    return LeaseThread.current;
  }

  private readonly buffer = new SharedArrayBuffer(8 * (1 + MAX_LEASE_SLOTS));
  private readonly shared = new Float64Array(this.buffer);
  private readonly owners = new Map<number, SlotOwner>();
  private worker: Worker | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private dead = false;

  /** Takes a free slot trusted until `trustedUntil` (main clock); throws if all are taken. */
  allocate(owner: SlotOwner, trustedUntil: number): number {
    for (let slot = 0; slot < MAX_LEASE_SLOTS; slot++) {
      if (this.owners.has(slot)) continue;
      this.owners.set(slot, owner);
      this.shared[slotIndex(slot)] = trustedUntil;
      return slot;
    }
    throw new Error(`more than ${MAX_LEASE_SLOTS} etcd leases in one process`);
  }

  /** The time (main clock, performance.now()) until which the lease in `slot` is trusted. */
  trustedUntil(slot: number): number {
    return this.shared[slotIndex(slot)];
  }

  /**
   * Starts the thread now, ahead of the first lease: booting a worker (a V8 isolate loading
   * grpc-js) takes seconds of CPU on a host where many processes start at once, and a lease
   * granted before the thread runs goes unrenewed meanwhile. `idle()` stops it again if no lease
   * came.
   */
  warm(): void {
    this.ensureStarted();
  }

  /** Stops the thread if it keeps no lease (after warm() for a join that failed). */
  idle(): void {
    if (this.owners.size === 0) this.shutdown();
  }

  /** Hands the slot's lease to the thread. */
  keep(request: Omit<KeepRequest, 'type'>): void {
    this.post({ type: 'keep', ...request });
  }

  /** Stops keeping the slot's lease and frees the slot; the last one stops the thread. */
  release(slot: number): void {
    if (!this.owners.delete(slot)) return;
    this.shared[slotIndex(slot)] = 0;
    this.worker?.postMessage({ type: 'forget', slot } satisfies ToLeaseThread);
    if (this.owners.size === 0) this.shutdown();
  }

  private post(msg: ToLeaseThread): void {
    this.ensureStarted().postMessage(msg);
  }

  private ensureStarted(): Worker {
    if (this.worker) return this.worker;
    this.beat();
    this.heartbeat = setInterval(() => this.beat(), HEARTBEAT_MS);
    this.heartbeat.unref();
    const data: LeaseThreadData = {
      shared: this.buffer,
      mainNow: performance.now(),
      hrNow: process.hrtime.bigint(),
    };
    const worker = new Worker(join(__dirname, 'lease-thread-main.js'), { workerData: data });
    worker.unref();
    worker.on('message', (msg: FromLeaseThread) => this.onMessage(msg));
    const fail = (cause: string): void => {
      if (this.worker !== worker) return;
      this.dead = true;
      this.worker = undefined;
      clearInterval(this.heartbeat);
      for (const [slot, owner] of this.owners) {
        this.shared[slotIndex(slot)] = 0;
        owner.lost(cause);
      }
      this.owners.clear();
    };
    worker.on('error', (err) => fail(`the lease thread failed: ${err.message}`));
    worker.on('exit', (code) => fail(`the lease thread exited (code ${code})`));
    this.worker = worker;
    return worker;
  }

  private beat(): void {
    this.shared[HEARTBEAT_INDEX] = performance.now();
  }

  private onMessage(msg: FromLeaseThread): void {
    if (msg.type === 'lost') {
      const owner = this.owners.get(msg.slot);
      if (owner?.lease === msg.lease) owner.lost(msg.cause);
    } else {
      // Lines about a connection (shared by the leases of one etcd) go to the first owner's logger.
      const owner = this.owners.values().next().value;
      owner?.log(msg.level, msg.msg, msg.fields);
    }
  }

  private shutdown(): void {
    const worker = this.worker;
    this.worker = undefined;
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    void worker?.terminate();
  }
}

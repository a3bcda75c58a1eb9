/**
 * Messages between the main thread and the lease thread, and the layout of the memory they
 * share. Shared memory (a Float64Array over a SharedArrayBuffer), not messages, carries what
 * must be current even while one side is blocked:
 *
 *   [0]         the main loop's heartbeat: its clock (performance.now()) at its last beat
 *   [1 + slot]  the lease in `slot` is trusted until this time, on the main thread's clock;
 *               0 = not trusted (never granted, lost, or fenced by a stalled main loop)
 *
 * Aligned 8-byte loads and stores do not tear on the 64-bit platforms Node supports, so a plain
 * Float64Array read is an atomic snapshot of one value; no other ordering is needed (each value
 * has one writer once the slot is handed to the thread).
 */

/** Leases one process can keep alive at once (members per process); a slot each. */
export const MAX_LEASE_SLOTS = 1024;

/** Index of the heartbeat in the shared array. */
export const HEARTBEAT_INDEX = 0;

/** Index of a slot's trusted-until time in the shared array. */
export function slotIndex(slot: number): number {
  return 1 + slot;
}

/** TLS material for etcd, as EtcdProviderOptions.etcd.credentials gives it (PEM). */
export interface LeaseCredentials {
  rootCertificate: Buffer;
  privateKey?: Buffer;
  certChain?: Buffer;
}

/** What the lease thread needs to keep one lease alive. */
export interface KeepRequest {
  type: 'keep';
  slot: number;
  /** Lease id (int64 as a decimal string). */
  lease: string;
  endpoints: string[];
  credentials?: LeaseCredentials | undefined;
  auth?: { username: string; password: string } | undefined;
  /** grpc-js channel options. */
  grpcOptions?: Record<string, unknown> | undefined;
  /** A keep-alive sent at t makes the lease trusted until t + trustMs (TTL - safety margin). */
  trustMs: number;
  intervalMs: number;
  /** A keep-alive unanswered this long means the stream is stuck: move to the next endpoint. */
  attemptTimeoutMs: number;
  /** Keep-alives stop (and the lease is revoked) once the main loop is this late. */
  maxLoopStallMs: number;
}

/** Stop keeping a lease alive (leave, or the main thread gave it up). */
export interface ForgetRequest {
  type: 'forget';
  slot: number;
}

export type ToLeaseThread = KeepRequest | ForgetRequest;

/** A lease the thread stopped trusting: etcd says it is gone, or the main loop stalled. */
export interface LostNotice {
  type: 'lost';
  slot: number;
  lease: string;
  cause: string;
}

/** A log line from the thread (it has no logger of its own). */
export interface LogNotice {
  type: 'log';
  level: 'debug' | 'warn';
  msg: string;
  fields: Record<string, unknown>;
}

export type FromLeaseThread = LostNotice | LogNotice;

/** workerData of the lease thread: the shared array, and the main clock at an hrtime instant. */
export interface LeaseThreadData {
  shared: SharedArrayBuffer;
  mainNow: number;
  hrNow: bigint;
}

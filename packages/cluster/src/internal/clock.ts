import { performance } from 'node:perf_hooks';

/**
 * Where the cluster reads time: call deadlines, backoff, lease validity and idle stamps. The
 * real clock by default; a deterministic simulation passes one that it advances itself.
 */
export interface Clock {
  /** Wall-clock epoch ms (deadlines that travel, log stamps), like Date.now(). */
  now(): number;
  /** Monotonic ms (leases, idle times), like performance.now(). */
  monotonic(): number;
  /**
   * Runs `fn` once after `ms` on a plain timer (not an actor system's wheel, which stops at
   * shutdown); returns what cancels it.
   */
  schedule(ms: number, fn: () => void): () => void;
}

/** Where the cluster draws randomness for backoff jitter: Math.random by default. */
export interface RandomSource {
  /** A number in [0, 1). */
  random(): number;
}

/** The real clock. */
export const SYSTEM_CLOCK: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  schedule: (ms, fn) => {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
};

/** Math.random. */
export const MATH_RANDOM: RandomSource = { random: () => Math.random() };

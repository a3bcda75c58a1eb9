import { performance } from 'node:perf_hooks';

/**
 * The runtime's time: every deadline, timeout, throttle window and restart-backoff window of
 * core reads it, and the timer wheel schedules on it. An ActorSystem takes one in its options
 * (`clock`), so a deterministic simulation can drive a whole node (or a cluster of them, given
 * the same clock) in virtual time. The default is the real one ({@link SYSTEM_CLOCK}).
 *
 * Not on it: the dispatcher's time slice (it measures the CPU time actors hold the event loop,
 * which virtual time cannot stand for) and the remote transport's connect, handshake and
 * reconnect timers (network I/O that a simulation replaces as a whole).
 */
export interface Clock {
  /** Wall-clock ms since the epoch (`Date.now()`): deadlines, which travel between nodes. */
  now(): number;
  /** Monotonic ms from an arbitrary origin (`performance.now()`): intervals and the wheel. */
  monotonic(): number;
  /** Runs `callback` once, `delayMs` from now (`setTimeout`); the handle is for clearTimer. */
  setTimer(callback: () => void, delayMs: number): unknown;
  /** Cancels a timer of setTimer that has not run (`clearTimeout`). */
  clearTimer(handle: unknown): void;
}

/** The real clock: Date.now, performance.now, setTimeout and clearTimeout. */
export const SYSTEM_CLOCK: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimer: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * Uniform numbers in [0, 1), like `Math.random` (the default): where a runtime built on core
 * draws jitter or random choices, so a simulation can make them reproducible.
 */
export type RandomSource = () => number;

import { performance } from 'node:perf_hooks';

/**
 * Longest stretch grain calls may run without letting timers and I/O in. Purely local call
 * loops resolve entirely in microtasks (the core dispatcher schedules an idle→busy loop as a
 * microtask), which would starve lease keep-alives; past this slice a call waits one
 * setImmediate first.
 */
const FAIRNESS_SLICE_MS = 5;

let lastYield = performance.now();

/** Undefined while the event loop turned recently; else a promise that resolves after it did. */
export function yieldIfStarving(): Promise<void> | undefined {
  if (performance.now() - lastYield < FAIRNESS_SLICE_MS) return undefined;
  return new Promise((resolve) =>
    setImmediate(() => {
      lastYield = performance.now();
      resolve();
    }),
  );
}

import type { PID, RootContext } from '@granary/core';

/**
 * The timed loop of the send benchmarks (core-tell, pool-local), in a function of its own. Inside
 * the async function that also builds the system and awaits the drain, the loop ran in V8's
 * on-stack-replacement code, or in the function's optimized code, which V8 threw away again
 * ("insufficient type feedback", at the function's entry) and remade, run after run:
 * pool-local's direct send at d5e0e30 alternated between 21 and 25-38 ns per message from one
 * measured run to the next. A small synchronous function is optimized once and stays: 18.3-18.6
 * ns in every measured run, at 42f2642 as at d5e0e30.
 */
export function sendNumbers(root: RootContext, target: PID, count: number): void {
  for (let i = 0; i < count; i++) root.send(target, i);
}

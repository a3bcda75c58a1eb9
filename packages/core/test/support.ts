import { ActorSystem, silentLogger, type ActorSystemOptions } from '../src/index';

/** A system that logs nothing, for tests. */
export function testSystem(options: ActorSystemOptions = {}): ActorSystem {
  return new ActorSystem({ logger: silentLogger, ...options });
}

/** A promise with its resolve, for waiting on an event. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Resolves after `n` macrotask turns (lets queued work run without a wall-clock sleep). */
export async function ticks(n = 1): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

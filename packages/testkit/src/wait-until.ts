import { TestkitError } from './errors';

/** Subscribes `listener` to something that happens (an event); returns the unsubscribe. */
export type Subscribe = (listener: () => void) => () => void;

/**
 * Resolves once `check()` holds: checked at once, then again after events of `on` (on the
 * next turn, so every listener of the event has run; once for events of the same turn), never
 * by polling. Rejects with a
 * TestkitError naming `what` after `timeoutMs`.
 *
 * @example
 * await waitUntil(() => nodes.every(agreed), 'members agree', {
 *   on: nodes.map((n) => (l) => n.on('topology', l)),
 * });
 */
export function waitUntil(
  check: () => boolean,
  what: string,
  options: { on: readonly Subscribe[]; timeoutMs?: number },
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 5000;
  return new Promise((resolve, reject) => {
    const offs: Array<() => void> = [];
    let settled = false;
    const done = (err?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      for (const off of offs) off();
      if (err) reject(err);
      else resolve();
    };
    const timer = setTimeout(
      () => done(new TestkitError(`timed out after ${timeoutMs} ms: ${what}`)),
      timeoutMs,
    );
    const recheck = (): void => {
      if (!settled && check()) done();
    };
    // Events often come in bursts (one per shard of a rebalance): one check per burst.
    let scheduled = false;
    const soon = (): void => {
      if (scheduled) return;
      scheduled = true;
      setImmediate(() => {
        scheduled = false;
        recheck();
      });
    };
    for (const subscribe of options.on) offs.push(subscribe(soon));
    recheck();
  });
}

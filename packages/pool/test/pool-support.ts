import {
  DeadLetterEvent,
  type ActorSystem,
  type Actor,
  type Context,
  type PID,
} from '@granary/core';
import type { PoolBehavior, PoolContext, PoolOptions } from '../src/pool-behavior';

/** What a worker saw: which worker, the message, the sender and headers it got. */
export interface Seen {
  worker: string;
  message: unknown;
  sender: PID | undefined;
  headers: Record<string, string>;
  args: unknown;
}

/** Records every user message into `log` and answers `{ worker, message }` to its sender. */
export class Recorder implements Actor {
  constructor(
    private readonly log: Seen[],
    private readonly args: unknown = undefined,
    private readonly gate?: Promise<void>,
  ) {}

  receive(ctx: Context): void | Promise<void> {
    const m = ctx.message;
    if (typeof m === 'object' && m !== null && m.constructor !== Object) return; // lifecycle
    if (m === 'crash') throw new Error('worker crashed on purpose');
    this.log.push({
      worker: ctx.self.id,
      message: m,
      sender: ctx.sender,
      headers: { ...ctx.headers },
      args: this.args,
    });
    if (ctx.sender) ctx.respond({ worker: ctx.self.id, message: m });
    if (this.gate) return this.gate;
  }
}

/** A promise opened by hand, to hold workers busy. */
export function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/**
 * A behavior with `init` returning `options`; the urgent request `'workers'` answers the
 * worker PIDs and `'ctx'` hands out the PoolContext (to call it later, outside a callback).
 */
export function behavior(
  options: PoolOptions,
  extra: Partial<PoolBehavior<unknown>> = {},
): () => PoolBehavior<unknown> {
  return () => ({
    init: () => options,
    handleCall: (pool: PoolContext, req: unknown) => {
      if (req === 'workers') return pool.workers.map((p) => p);
      if (req === 'ctx') return { pool };
      return undefined;
    },
    ...extra,
  });
}

/** Collects dead letters of the system with the given reason. */
export function deadLetters(system: ActorSystem, reason: string): DeadLetterEvent[] {
  const out: DeadLetterEvent[] = [];
  system.eventStream.subscribe(DeadLetterEvent, (e: DeadLetterEvent) => {
    if (e.reason === reason) out.push(e);
  });
  return out;
}

/** Resolves on the next macrotask, after the dispatcher ran what was ready. */
export function tick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Waits (turn by turn, no timers) until `cond` holds; fails after a bounded number of turns. */
export async function until(cond: () => boolean, turns = 10_000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (cond()) return;
    await tick();
  }
  throw new Error('condition not reached');
}

/** The error `p` rejects with; fails if it resolves. */
export async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

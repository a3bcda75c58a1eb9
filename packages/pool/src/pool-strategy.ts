import { InvalidArgumentError, InvalidOptionError } from '@granary/core';
import { hashString, mix32 } from './internal/hash';

/** Names of the built-in strategies that need no argument. */
export type PoolStrategyName = 'round-robin' | 'least-busy' | 'random' | 'broadcast';

/** What a strategy may know about the workers: how many, and how loaded each is. */
export interface WorkerLoad {
  /** Number of workers; indices run from 0 to `count - 1`. */
  readonly count: number;
  /** Messages forwarded to worker `index` that it has not finished (queued or in progress). */
  load(index: number): number;
  /** Stable identity of the slot at `index`; a replacement worker keeps its slot's key. */
  slotKey(index: number): number;
}

/**
 * How a `Pool` picks the worker for a user-lane message. The pool asks `first` for the worker
 * to try, then (when `fallback`) tries the others in index order after it, wrapping around,
 * until one accepts; `delivered` is told which one did.
 */
export interface PoolStrategy {
  /** Shown by `inspect()` as `strategy`. */
  readonly name: string;
  /** Try other workers when the chosen one's mailbox is full. */
  readonly fallback: boolean;
  /** Forward every message to every worker instead of to one. */
  readonly broadcast: boolean;
  /** `first` reads `workers.load(i)`: the pool then counts each worker's waiting messages. */
  readonly usesLoad?: boolean;
  /** Index of the first worker to try for `message`. */
  first(message: unknown, workers: WorkerLoad): number;
  /** Worker `index` accepted the message. */
  delivered(index: number): void;
}

/**
 * ergo's act.Pool FIFO queue of workers: take the head; whether it accepted the message or was
 * full, it goes back to the tail. A cursor over the worker array gives the same order without
 * moving anything.
 */
export function roundRobin(): PoolStrategy {
  let cursor = 0;
  return {
    name: 'round-robin',
    fallback: true,
    broadcast: false,
    first: (_message, workers) => (cursor < workers.count ? cursor : 0),
    delivered: (index) => {
      cursor = index + 1;
    },
  };
}

/**
 * The worker with the fewest messages outstanding, an idle one first (free-first, as
 * `AsyncPool` hands out a free element); ties go to the next index after the last choice.
 */
export function leastBusy(): PoolStrategy {
  let last = -1;
  return {
    name: 'least-busy',
    fallback: true,
    broadcast: false,
    usesLoad: true,
    first: (_message, workers) => {
      const n = workers.count;
      let best = 0;
      let bestLoad = Infinity;
      for (let k = 1; k <= n; k++) {
        const i = (last + k) % n;
        const load = workers.load(i);
        if (load < bestLoad) {
          best = i;
          bestLoad = load;
          if (load === 0) break;
        }
      }
      return best;
    },
    delivered: (index) => {
      last = index;
    },
  };
}

/** A uniformly random worker; when it is full, the ones after it. */
export function random(rng: () => number = Math.random): PoolStrategy {
  return {
    name: 'random',
    fallback: true,
    broadcast: false,
    first: (_message, workers) => Math.floor(rng() * workers.count) % workers.count,
    delivered: () => {},
  };
}

/**
 * The same key always goes to the same worker slot (rendezvous hashing: the slot with the
 * highest hash of key and slot wins), so adding or removing a worker moves only the keys of
 * that worker. A replacement of a dead worker keeps its slot and so its keys. A full worker
 * is not bypassed (that would break the affinity): the message is refused as saturated.
 */
export function consistentHash(keyOf: (message: unknown) => string | number): PoolStrategy {
  if (typeof keyOf !== 'function') {
    throw new InvalidArgumentError('keyOf', 'consistentHash needs a key function');
  }
  return {
    name: 'consistent-hash',
    fallback: false,
    broadcast: false,
    first: (message, workers) => {
      const key = hashString(String(keyOf(message)));
      let best = 0;
      let bestScore = -1;
      for (let i = 0; i < workers.count; i++) {
        const score = mix32(key ^ workers.slotKey(i));
        if (score > bestScore) {
          best = i;
          bestScore = score;
        }
      }
      return best;
    },
    delivered: () => {},
  };
}

/** Every message to every worker (each keeps the original sender). */
export function broadcast(): PoolStrategy {
  return {
    name: 'broadcast',
    fallback: false,
    broadcast: true,
    first: () => 0,
    delivered: () => {},
  };
}

/** Resolves a strategy option (a name or a strategy object) to a fresh strategy. */
export function resolveStrategy(strategy: PoolStrategyName | PoolStrategy): PoolStrategy {
  if (typeof strategy === 'object' && strategy !== null) return strategy;
  switch (strategy) {
    case 'round-robin':
      return roundRobin();
    case 'least-busy':
      return leastBusy();
    case 'random':
      return random();
    case 'broadcast':
      return broadcast();
    default:
      throw new InvalidOptionError(
        'strategy',
        `unknown pool strategy ${JSON.stringify(strategy)}: use 'round-robin', 'least-busy', 'random', 'broadcast' or consistentHash(keyOf)`,
      );
  }
}

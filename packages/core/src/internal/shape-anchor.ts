import { ActorSystem } from '../actor-system';
import { silentLogger } from '../logger';
import { Props } from '../props';
import { CellExtras } from './cell-extras';
import { Envelope } from './envelope';
import { OverflowQueue } from './overflow-queue';

/** A message the anchor actor leaves unanswered, so its request stays pending. */
const HOLD = Symbol('shape-anchor-hold');

/** Set once: the objects that keep the runtime's shapes alive for the life of the process. */
let anchor: readonly unknown[] | undefined;

/**
 * Keeps one object of each hot runtime shape alive for the life of the process. Call it once,
 * before the first ActorSystem, in a process that creates systems one after another (a
 * benchmark's repetitions, a test suite); a node that runs one system for its life keeps its
 * shapes alive anyway and gains nothing from it. Later calls do nothing.
 *
 * V8 holds the map transitions that class fields create weakly. Once the last object of a
 * shape is garbage (a system shut down and a full GC ran), its map is collected; the next
 * system builds new maps, and every optimized function that checked the old ones is thrown
 * away and has to warm up again. Measured with the bench harness's forced GC before each
 * repetition (docs/performance-notes.md): without the anchor, local requests ran at ~0.7x
 * (sequential and 1,000 in flight) and tells at ~0.8x.
 *
 * The anchor is one dormant system: an actor, its PID, a request it never answers (a pending
 * future), an envelope, cell extras and an overflow queue with its first chunk. About 12 KB,
 * no timer and no handle: it does not keep the process alive.
 */
export function retainRuntimeShapes(): void {
  if (anchor !== undefined) return;
  const system = new ActorSystem({ name: '$shapes', logger: silentLogger });
  const pid = system.root.spawn(Props.fromFunc(() => {}));
  const pending = system.root.request(pid, HOLD);
  anchor = [
    system,
    pid,
    pending,
    new Envelope(HOLD, pid, undefined),
    new CellExtras(),
    new OverflowQueue(),
  ];
}

import { Props } from '../props';
import type { RootContext } from '../root-context';
import { CellExtras } from './cell-extras';
import { Envelope } from './envelope';
import { OverflowQueue } from './overflow-queue';

/** What the anchor needs of the system it is given (a type only: no import of the system). */
interface AnchorSystem {
  readonly root: RootContext;
}

/** A message the anchor actor leaves unanswered, so its request stays pending. */
const HOLD = Symbol('shape-anchor-hold');

/** Set once: the objects that keep the runtime's shapes alive for the life of the process. */
let anchor: readonly unknown[] | undefined;

/**
 * Keeps one object of each hot runtime shape alive for the life of the process.
 *
 * V8 holds the map transitions that class fields create weakly. Once the last object of a
 * shape is garbage (a system shut down and a full GC ran), its map is collected; the next
 * system builds new maps, and every optimized function that checked the old ones is thrown
 * away and has to warm up again. A process that creates systems one after another (test
 * suites, each benchmark repetition) paid that each time: ~150 `weak objects`
 * deoptimizations over 12 systems in a row, and local round trips at half speed (2.1M vs
 * 4.4M requests/s with 1,000 in flight) until the JIT caught up.
 *
 * The anchor is one dormant system: an actor, its PID, a request it never answers (a pending
 * future), an envelope, cell extras and an overflow queue with its first chunk. About 12 KB,
 * no timer and no handle: it does not keep the process alive.
 */
export function anchorShapes(makeSystem: () => AnchorSystem): void {
  if (anchor !== undefined) return;
  anchor = []; // set first: makeSystem constructs an ActorSystem, which calls this again
  const system = makeSystem();
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

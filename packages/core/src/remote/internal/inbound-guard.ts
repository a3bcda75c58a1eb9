import { Stop, Terminated, Unwatch, Watch } from '../../messages';
import type { PID } from '../../pid';

/**
 * True for the id of a system actor: `$` then a letter (`$granary-seed`, `$remote-activator`,
 * the grain routers `$g/...`). Unnamed actors are `$<n>` and are not system actors.
 */
export function isSystemActorId(id: string): boolean {
  if (id.length < 2 || id.charCodeAt(0) !== 36 /* $ */) return false;
  const c = id.charCodeAt(1);
  return !(c >= 48 && c <= 57);
}

/**
 * Why a peer may not send this system message to `target` (undefined when it may): no remote
 * Stop of a system actor, and a peer speaks only for its own actors: a watcher it names, or
 * an actor it reports terminated, must live at the peer's authenticated address `from`
 * (otherwise a Terminated later would go to an address the peer chose).
 */
export function forbiddenSystemMessage(
  target: PID,
  message: Watch | Unwatch | Terminated | Stop,
  from: string,
): string | undefined {
  if (message instanceof Stop) {
    return isSystemActorId(target.id) ? `a remote Stop of system actor ${target.id}` : undefined;
  }
  if (message instanceof Watch || message instanceof Unwatch) {
    const at = message.watcher.address;
    return at === from ? undefined : `a watcher at ${at}, not at the peer's address ${from}`;
  }
  if (message instanceof Terminated) {
    const at = message.who.address;
    return at === from ? undefined : `a Terminated for ${at}, not for the peer's address ${from}`;
  }
  return undefined;
}

/** Why a peer may not send a PoisonPill to `target` (a system actor), else undefined. */
export function forbiddenPoison(target: PID): string | undefined {
  return isSystemActorId(target.id)
    ? `a remote PoisonPill to system actor ${target.id}`
    : undefined;
}

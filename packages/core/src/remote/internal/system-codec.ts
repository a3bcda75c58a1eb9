import { PID } from '../../pid';
import { Stop, Terminated, Unwatch, Watch } from '../../messages';
import type { TerminatedReason } from '../../messages';
import type { WirePid, WireSystemMessage } from './wire';
import { WireTypes } from './wire';

/** Type name written for system envelopes (informative; `format` decides). */
export const SYSTEM_TYPE_NAME = 'granary.remote.SystemMessage';

const TERMINATED_REASONS = new Set<string>([
  'stopped',
  'failed',
  'address-terminated',
  'not-found',
]);

function wirePid(pid: PID): WirePid {
  return { address: pid.address, id: pid.id };
}

function pidOf(wire: WirePid | undefined | null): PID {
  if (!wire) throw new Error('system message without a pid');
  return new PID(wire.address, wire.id);
}

/** Encodes the system messages that cross nodes; undefined for any other message. */
export function encodeSystemMessage(message: unknown): Uint8Array | undefined {
  let wire: WireSystemMessage;
  if (message instanceof Watch) wire = { watch: wirePid(message.watcher) };
  else if (message instanceof Unwatch) wire = { unwatch: wirePid(message.watcher) };
  else if (message instanceof Terminated)
    wire = { terminated: { who: wirePid(message.who), why: message.why } };
  else if (message instanceof Stop) wire = { stop: { why: message.why } };
  else return undefined;
  return WireTypes.SystemMessage.encode(wire).finish();
}

/**
 * Decodes a system envelope payload.
 * @throws Error on a payload that is not one of the known system messages.
 */
export function decodeSystemMessage(bytes: Uint8Array): Watch | Unwatch | Terminated | Stop {
  const wire = WireTypes.SystemMessage.decode(bytes) as unknown as WireSystemMessage;
  if (wire.watch) return new Watch(pidOf(wire.watch));
  if (wire.unwatch) return new Unwatch(pidOf(wire.unwatch));
  if (wire.terminated)
    return new Terminated(pidOf(wire.terminated.who), reason(wire.terminated.why));
  if (wire.stop) return new Stop(wire.stop.why === 'failed' ? 'failed' : 'stopped');
  throw new Error('empty system message');
}

function reason(why: string): TerminatedReason {
  return TERMINATED_REASONS.has(why) ? (why as TerminatedReason) : 'stopped';
}

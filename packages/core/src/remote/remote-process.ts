import { FUTURE_PREFIX } from '../internal/future-ids';
import { MessageTooLargeError } from '../errors';
import { PoisonPill, Stop, Terminated, Unwatch, Watch } from '../messages';
import { PID } from '../pid';
import { entryOf } from '../entry';
import { Envelope } from '../internal/envelope';
import type { Entry, Process } from '../process';
import { NONHOST } from '../process-registry';
import type { WireMessage } from '../serialization/serialization-registry';
import { SerializationFormat } from '../serialization/serialization-registry';
import type { EnvelopeSink } from './internal/outbound-envelope';
import type { RemoteState } from './internal/remote-state';
import { utf8Length } from './internal/byte-writer';
import { envelopeRefusal, overString } from './internal/envelope-limits';
import { SYSTEM_TYPE_NAME, encodeSystemMessage } from './internal/system-codec';
import { SYSTEM_FORMAT } from './internal/wire';

/** Wire type name of PoisonPill, which has no fields and must arrive as the class. */
export const POISON_PILL_TYPE_NAME = 'granary.PoisonPill';
const POISON_PILL_WIRE: WireMessage = {
  typeName: POISON_PILL_TYPE_NAME,
  format: SerializationFormat.Bytes,
  bytes: new Uint8Array(0),
  text: undefined,
};

/**
 * The process of every PID on one other node: serializes user and system messages at send
 * time (so size and type errors surface at the sender) and queues them on the endpoint.
 */
export class RemoteProcess implements Process {
  /** Set when its endpoint is removed: PIDs that cached it resolve again. */
  dead = false;

  constructor(
    private readonly state: RemoteState,
    readonly endpoint: EnvelopeSink,
    /**
     * The registry's `remoteOwner` for an endpoint's process, which PIDs may cache (see
     * ProcessRegistry.cacheRoute); undefined for a link route's, which depends on the PID.
     */
    readonly owner: object | undefined = undefined,
  ) {}

  /**
   * Serializes the entry and queues it on the endpoint (a request's future is its own
   * envelope: it goes as it is). Never refuses: a full send queue is the endpoint's to handle.
   */
  post(pid: PID, entry: Entry, urgent: boolean): boolean {
    const { state } = this;
    // The entry is looked at once (a request's future is its own envelope), not once a field.
    const envelope = entry instanceof Envelope ? entry : undefined;
    const message = envelope === undefined ? entry : envelope.message;
    const from = envelope?.sender;
    let wire: WireMessage;
    try {
      wire =
        message instanceof PoisonPill
          ? POISON_PILL_WIRE
          : state.serialization.serializeForWire(message);
    } catch (err) {
      this.fail(pid, message, from, err as Error);
      return true;
    }
    const text = wire.text;
    const payloadLength = text === undefined ? wire.bytes!.byteLength : utf8Length(text);
    const header = envelope?.header;
    // What nearly every message is (short strings, no header, a small payload) is told by
    // lengths alone; the limits are measured out of line (see refusalOf). Inlined here, the
    // checks and their errors took TurboFan's inlining budget of this, the hottest function
    // of a remote send, from the link's send path below.
    const max = state.limits.maxStringBytes;
    if (
      payloadLength > state.maxMessageBytes ||
      header !== undefined ||
      pid.id.length * 3 > max ||
      wire.typeName.length * 3 > max ||
      (from !== undefined && from.id.length * 3 > max)
    ) {
      const refusal = this.refusalOf(pid, wire.typeName, payloadLength, from, header);
      if (refusal !== undefined) {
        this.fail(pid, message, from, refusal);
        return true;
      }
    }
    const sender = from === undefined ? undefined : this.localize(from);
    this.endpoint.send({
      targetId: pid.id,
      typeName: wire.typeName,
      format: wire.format,
      payload: text ?? wire.bytes!,
      payloadLength,
      sender,
      header,
      urgent,
      deadline: envelope?.deadline,
      message,
    });
    return true;
  }

  /** Why the message cannot be sent as it is (too large, or over a peer's inbound limits). */
  private refusalOf(
    pid: PID,
    typeName: string,
    payloadLength: number,
    from: PID | undefined,
    header: Record<string, string> | undefined,
  ): Error | undefined {
    const { state } = this;
    if (payloadLength > state.maxMessageBytes) {
      return new MessageTooLargeError(typeName, payloadLength, state.maxMessageBytes);
    }
    return envelopeRefusal(pid.id, typeName, from?.id, header, state.limits);
  }

  sendSystemMessage(pid: PID, message: unknown): void {
    const { state } = this;
    const refusal = overString('target id', pid.id, state.limits.maxStringBytes);
    if (refusal !== undefined) return this.unsendable(pid, message, refusal);
    if (message instanceof Watch) {
      const watcher = this.localize(message.watcher);
      if (this.endpoint.isDown) {
        // Watching an actor of a node we know is unreachable answers at once, like a dead one.
        state.registry
          .get(watcher)
          .sendSystemMessage(watcher, new Terminated(pid, 'address-terminated'));
        return;
      }
      state.watches.add(pid, watcher);
      message = new Watch(watcher);
    } else if (message instanceof Unwatch) {
      const watcher = this.localize(message.watcher);
      state.watches.remove(pid, watcher);
      message = new Unwatch(watcher);
    } else if (message instanceof Terminated) {
      message = new Terminated(this.localize(message.who), message.why);
    }
    const payload = encodeSystemMessage(message);
    if (payload === undefined) {
      state.deadLetters.publish(pid, message, undefined, 'not-remotable');
      return;
    }
    this.endpoint.send({
      targetId: pid.id,
      typeName: SYSTEM_TYPE_NAME,
      format: SYSTEM_FORMAT,
      payload,
      urgent: false,
      message,
    });
  }

  stop(pid: PID): void {
    this.sendSystemMessage(pid, new Stop());
  }

  /**
   * A system message to an id no peer accepts on the wire: a watch is answered at once as if
   * the actor were not there (from here it cannot be reached), the rest are dead letters.
   */
  private unsendable(pid: PID, message: unknown, error: Error): void {
    if (message instanceof Watch) {
      const watcher = message.watcher;
      this.state.registry.get(watcher).sendSystemMessage(watcher, new Terminated(pid, 'not-found'));
      return;
    }
    this.state.deadLetters.publish(pid, message, undefined, reasonOf(error), error);
  }

  /**
   * A message that cannot be sent. A request (future sender) rejects with the error; a reply
   * to a remote requester sends it the error instead, so it fails fast; a plain send throws it
   * to the caller, who still holds the message.
   */
  private fail(pid: PID, message: unknown, sender: PID | undefined, error: Error): void {
    if (sender !== undefined && sender.id.startsWith(FUTURE_PREFIX)) {
      this.state.deadLetters.publish(pid, message, sender, reasonOf(error), error);
      return;
    }
    if (pid.id.startsWith(FUTURE_PREFIX)) {
      // A requester whose future id is itself over the limit (a peer with larger limits) could
      // not be sent the error either: a dead letter, not a loop.
      if (overString('target id', pid.id, this.state.limits.maxStringBytes) !== undefined) {
        this.state.deadLetters.publish(pid, message, sender, reasonOf(error), error);
        return;
      }
      this.state.logger.warn(
        { target: pid.toString(), err: error.message },
        'reply could not be sent; the requester gets the error',
      );
      this.post(pid, entryOf(error), false);
      return;
    }
    throw error;
  }

  /** PIDs made before remoting started say 'nonhost'; peers must see our real address. */
  private localize(pid: PID): PID {
    return pid.address === NONHOST ? new PID(this.state.address, pid.id) : pid;
  }
}

/** Dead-letter reason for an error: its code, lower-cased without the ERR_ prefix. */
export function reasonOf(error: Error): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string'
    ? code.replace(/^ERR_/, '').toLowerCase().replace(/_/g, '-')
    : 'send-failed';
}

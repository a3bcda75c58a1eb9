import * as protobuf from 'protobufjs';
import { POISON_PILL, Terminated } from '../../messages';
import { PID } from '../../pid';
import { entryOf } from '../../entry';
import { sendEntry } from '../../internal/deliver';
import type { SerializationFormat } from '../../serialization/serialization-registry';
import type { UndecodableMessage } from '../remote-events';
import { POISON_PILL_TYPE_NAME, reasonOf } from '../remote-process';
import { forbiddenPoison, forbiddenSystemMessage } from './inbound-guard';
import type { RemoteState } from './remote-state';
import { decodeSystemMessage } from './system-codec';
import type { WireBatch } from './wire';
import { SYSTEM_FORMAT, payloadOf } from './wire';

/**
 * Hands every envelope of a batch from `from` (the link's authenticated address) to its local
 * target, through the same dispatch as a local send (`sendEntry`): a full mailbox or a missing
 * target dead-letters as locally, which rejects a remote requester with MailboxFullError or
 * DeadLetterError. Undecodable messages are dead-lettered (a request's remote future gets the
 * error). Every sender carries `route`, the way back over the link (PID._via). What a peer may
 * not send (inbound-guard) is dropped and counted.
 */
export function deliverBatch(
  state: RemoteState,
  batch: WireBatch,
  from: string,
  receivedAt: number,
  route?: object,
): void {
  // One reader per frame: payloads are decoded where they lie (no view, no reader per message).
  let reader: protobuf.Reader | undefined;
  // One PID per distinct target in the batch: the registry caches the process on it, so a
  // stream of messages to one actor costs one lookup per frame, not one per message.
  const targets = new Array<PID | undefined>(batch.targetIds.length);
  // Read once per frame, and only when an envelope has a deadline.
  let now: number | undefined;
  // Deadlines arrive as time left (the peers' clocks need not agree), counted from the frame's
  // arrival: it may have waited for its turn since.
  for (const env of batch.envelopes) {
    const target = (targets[env.target] ??= new PID(state.address, batch.targetIds[env.target]!));
    const sender =
      env.senderAddress === 0
        ? undefined
        : new PID(batch.senderAddresses[env.senderAddress - 1]!, env.senderId);
    if (sender !== undefined) sender._via = route;
    if (env.format === SYSTEM_FORMAT) {
      deliverSystem(state, target, payloadOf(env), from);
      continue;
    }
    const deadline = env.timeoutMs > 0 ? receivedAt + env.timeoutMs : undefined;
    if (deadline !== undefined && deadline <= (now ??= state.clock.now())) {
      state.expired.onArrival++;
      continue;
    }
    const typeName = batch.typeNames[env.type]!;
    let message: unknown;
    try {
      if (typeName === POISON_PILL_TYPE_NAME) {
        const why = forbiddenPoison(target);
        if (why !== undefined) {
          forbidden(state, why, from);
          continue;
        }
        message = POISON_PILL;
      } else {
        if (reader === undefined || reader.buf !== env.bytes)
          reader = protobuf.Reader.create(env.bytes);
        message = state.serialization.deserializeFrom(
          typeName,
          reader,
          env.start,
          env.end,
          env.format as SerializationFormat,
        );
      }
    } catch (err) {
      // A frame whose memory is reused keeps no view (see WireBatch.reused): a copy.
      const payload = batch.reused ? new Uint8Array(payloadOf(env)) : payloadOf(env);
      const undecodable: UndecodableMessage = { typeName, payload };
      state.deadLetters.publish(target, undecodable, sender, reasonOf(err as Error), err as Error);
      continue;
    }
    const header = env.header && Object.keys(env.header).length > 0 ? env.header : undefined;
    sendEntry(state, target, entryOf(message, sender, header, deadline), env.urgent);
  }
}

function deliverSystem(state: RemoteState, target: PID, payload: Uint8Array, from: string): void {
  let message: ReturnType<typeof decodeSystemMessage>;
  try {
    message = decodeSystemMessage(payload);
  } catch (err) {
    // Counted and throttled like the other refused messages: a peer may send thousands a frame.
    state.events.report(
      'forbiddenMessages',
      'warn',
      { peer: from, err: (err as Error).message },
      'remote system message refused: it does not decode',
    );
    state.deadLetters.publish(target, payload, undefined, 'undecodable-system-message');
    return;
  }
  const why = forbiddenSystemMessage(target, message, from);
  if (why !== undefined) return forbidden(state, why, from);
  if (message instanceof Terminated) state.watches.terminated(message.who, target);
  state.registry.get(target).sendSystemMessage(target, message);
}

function forbidden(state: RemoteState, why: string, from: string): void {
  state.events.report(
    'forbiddenMessages',
    'warn',
    { peer: from, why },
    'remote message refused: a peer may not send it',
  );
}

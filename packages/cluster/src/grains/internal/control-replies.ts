import { TYPE_NAME, withTypeName } from '@granary/core';
import { GrainError } from '../../errors';
import { ThreadHandlerError } from '../../threads/errors';

/**
 * Type name of the runtime's own replies to a grain call (as opposed to the grain's reply):
 * plain data, so they cross the wire as JSON with their fields intact (errors would lose them).
 */
export const CONTROL_TYPE_NAME = 'granary.grain.Control';

/** What the runtime answered instead of the grain. */
export type ControlReply =
  | { c: 'not-owner'; owner?: string }
  | { c: 'failure'; name: string; code?: string; message: string }
  | { c: 'denied' }
  | { c: 'deadlock'; chain: string[] }
  | { c: 'mailbox-full'; capacity: number }
  | { c: 'ack' };

/** Tags a control reply for the wire. */
export function control(reply: ControlReply): ControlReply {
  return withTypeName(CONTROL_TYPE_NAME, reply);
}

/** Shared acknowledgement of an accepted send. */
export const ACK: ControlReply = control({ c: 'ack' });

/** The control reply inside `reply`, if it is one. */
export function asControl(reply: unknown): ControlReply | undefined {
  if (reply === null || typeof reply !== 'object') return undefined;
  const tag = (reply as { [TYPE_NAME]?: string })[TYPE_NAME];
  return tag === CONTROL_TYPE_NAME ? (reply as ControlReply) : undefined;
}

/**
 * A failure reply carrying an error thrown by grain code. An error that stands for another one
 * (a GrainError the grain rethrew from a call of its own, a threaded handler's error) passes on
 * the name and code of the error first thrown, not its own.
 */
export function failureOf(error: unknown): ControlReply {
  const e = error instanceof Error ? error : new Error(String(error));
  const nested = GrainError.is(e) || ThreadHandlerError.is(e);
  const code = nested ? e.originalCode : (e as { code?: unknown }).code;
  return control({
    c: 'failure',
    name: nested ? e.originalName : e.name,
    code: typeof code === 'string' ? code : undefined,
    message: e.message,
  });
}

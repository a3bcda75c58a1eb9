import { PID } from '@granary/core';

/**
 * Header keys of a grain call. A call travels as the user's own message to the target member's
 * grain router, with string headers: no wrapping, so the message is serialized once. A top-level
 * call carries one header (every map entry costs on the wire); the chain headers only appear on
 * calls grains make.
 */
/** `<deadline epoch ms>/<kind>/<identity>` (a kind never contains '/'; the identity may). */
export const H_CALL = 'g';
/** Call-chain id (calls made by grains). */
export const H_CHAIN = 'g.c';
/** JSON array of the non-reentrant grains waiting in the chain ('kind/identity'). */
export const H_PATH = 'g.p';
/** '1': a send; the router acknowledges acceptance instead of the grain replying. */
export const H_ACK = 'g.a';
/** A send's reply-to `<address>/<id>` (addresses hold no '/'): the grain's sender, if any. */
export const H_REPLY_TO = 'g.r';

/** Kind, identity and deadline of a call. */
export interface CallTarget {
  kind: string;
  identity: string;
  deadline: number;
}

/** Builds the header of a call (shared by its attempts). */
export function callHeader(
  kind: string,
  identity: string,
  deadline: number,
  chainId: string | undefined,
  path: readonly string[] | undefined,
  ack: boolean,
  replyTo?: PID,
): Record<string, string> {
  const h: Record<string, string> = { [H_CALL]: `${deadline}/${kind}/${identity}` };
  if (chainId) h[H_CHAIN] = chainId;
  if (path !== undefined && path.length > 0) h[H_PATH] = JSON.stringify(path);
  if (ack) h[H_ACK] = '1';
  if (replyTo !== undefined) h[H_REPLY_TO] = `${replyTo.address}/${replyTo.id}`;
  return h;
}

/** The reply-to PID of a send's header; undefined when absent or malformed. */
export function replyToOf(header: Readonly<Record<string, string>> | undefined): PID | undefined {
  const v = header?.[H_REPLY_TO];
  const slash = v === undefined ? -1 : v.indexOf('/');
  return slash > 0 ? new PID(v!.slice(0, slash), v!.slice(slash + 1)) : undefined;
}

/** Parses the call header; undefined when absent or malformed. */
export function targetOf(
  header: Readonly<Record<string, string>> | undefined,
): CallTarget | undefined {
  const v = header?.[H_CALL];
  if (v === undefined) return undefined;
  const a = v.indexOf('/');
  const b = a < 0 ? -1 : v.indexOf('/', a + 1);
  if (b < 0) return undefined;
  const deadline = Number(v.slice(0, a));
  return {
    deadline: Number.isFinite(deadline) ? deadline : Infinity,
    kind: v.slice(a + 1, b),
    identity: v.slice(b + 1),
  };
}

/** The deadline of a header (Infinity when absent or malformed). */
export function deadlineOf(header: Readonly<Record<string, string>> | undefined): number {
  const v = header?.[H_CALL];
  const n = v === undefined ? NaN : Number(v.slice(0, v.indexOf('/')));
  return Number.isFinite(n) ? n : Infinity;
}

/** The chain path of a header (empty when absent or malformed). */
export function pathOf(header: Readonly<Record<string, string>> | undefined): readonly string[] {
  const p = header?.[H_PATH];
  if (p === undefined) return EMPTY;
  try {
    const v = JSON.parse(p) as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : EMPTY;
  } catch {
    return EMPTY;
  }
}

const EMPTY: readonly string[] = Object.freeze([]);

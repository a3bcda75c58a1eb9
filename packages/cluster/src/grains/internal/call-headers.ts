import { PID } from '@granary/core';

/**
 * Header keys of a grain call. A call travels as the user's own message to the grain router of
 * its kind on the target member (`routerIdOf(kind)`), with string headers: no wrapping, so the
 * message is serialized once. Its deadline is the request's own (core carries a request's time
 * left across nodes). A top-level call carries one header, the identity string the caller was
 * given: no per-call string is built (a concatenated header is a rope that every encode must
 * flatten, and a deadline as text costs a number-to-string conversion: together ~2 µs per call
 * in the caller, measured). The chain headers only appear on calls grains make.
 */
/** The grain identity. */
export const H_IDENTITY = 'g';
/** Call-chain id (calls made by grains). */
export const H_CHAIN = 'g.c';
/** JSON array of the non-reentrant grains waiting in the chain ('kind/identity'). */
export const H_PATH = 'g.p';
/** '1': a send; the router acknowledges acceptance instead of the grain replying. */
export const H_ACK = 'g.a';
/** A send's reply-to `<address>/<id>` (addresses hold no '/'): the grain's sender, if any. */
export const H_REPLY_TO = 'g.r';

/** Prefix of the grain routers' ids: calls to kind K go to `<owner address>/$grains/K`. */
export const ROUTER_PREFIX = '$grains/';

/** The id of the router of `kind` on every member that hosts it. */
export function routerIdOf(kind: string): string {
  return ROUTER_PREFIX + kind;
}

/** Builds the header of a call (shared by its attempts). */
export function callHeader(
  identity: string,
  chainId: string | undefined,
  path: readonly string[] | undefined,
  ack: boolean,
  replyTo?: PID,
): Record<string, string> {
  const h: Record<string, string> = { [H_IDENTITY]: identity };
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

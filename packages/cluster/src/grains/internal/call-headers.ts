import { PID } from '@granary/core';

/**
 * How a grain call travels. A call is the user's own message sent as a core request, so it is
 * serialized once and its deadline is the request's own (core carries a request's time left
 * across nodes). To another member it goes to the grain's PID there, `grainIdOf(kind, id)`:
 * the owner's registry routes that id prefix to the kind's router, and a batch sends each
 * grain id once in its table of target ids. A top-level call then carries no header and no
 * per-call string (a concatenated header is a rope every encode must flatten, a deadline as
 * text a number-to-string conversion: ~2 µs per call in the caller, measured). A call to this
 * member's own router names the identity in the `g` header instead (a local post does not carry
 * its target id). The chain headers only appear on calls grains make.
 */
/** The grain identity (calls to this member's own router). */
export const H_IDENTITY = 'g';
/** Call-chain id (calls made by grains). */
export const H_CHAIN = 'g.c';
/** JSON array of the non-reentrant grains waiting in the chain ('kind/identity'). */
export const H_PATH = 'g.p';
/** '1': a send; the router acknowledges acceptance instead of the grain replying. */
export const H_ACK = 'g.a';
/** A send's reply-to `<address>/<id>` (addresses hold no '/'): the grain's sender, if any. */
export const H_REPLY_TO = 'g.r';

/** Prefix of the grain routers' ids: the router of kind K is `$g/K`. */
export const ROUTER_PREFIX = '$g/';

/** The id of the router of `kind` on every member that hosts it. */
export function routerIdOf(kind: string): string {
  return ROUTER_PREFIX + kind;
}

/** The prefix of the grain ids of `kind`, which the owner's registry routes to its router. */
export function grainPrefixOf(kind: string): string {
  return `${ROUTER_PREFIX}${kind}/`;
}

/** A grain's id at its owner: `$g/<kind>/<identity>` (a kind never contains '/'). */
export function grainIdOf(kind: string, identity: string): string {
  return grainPrefixOf(kind) + identity;
}

/** The chain and send headers of a call (shared by its attempts); undefined when it has none. */
export function callHeader(
  chainId: string | undefined,
  path: readonly string[] | undefined,
  ack: boolean,
  replyTo?: PID,
): Record<string, string> | undefined {
  if (!chainId && (path === undefined || path.length === 0) && !ack && replyTo === undefined) {
    return undefined;
  }
  const h: Record<string, string> = {};
  if (chainId) h[H_CHAIN] = chainId;
  if (path !== undefined && path.length > 0) h[H_PATH] = JSON.stringify(path);
  if (ack) h[H_ACK] = '1';
  if (replyTo !== undefined) h[H_REPLY_TO] = `${replyTo.address}/${replyTo.id}`;
  return h;
}

/** The header of a call to this member's own router: `header` plus the identity. */
export function localCallHeader(
  identity: string,
  header: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  return header === undefined ? { [H_IDENTITY]: identity } : { ...header, [H_IDENTITY]: identity };
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

import type { Context as TraceContext } from '@opentelemetry/api';
import { PID, injectTraceContext } from '@granary/core';

/**
 * How a grain call travels. A call is the user's own message sent as a core request to the
 * grain's PID at its owner, `<owner address>/$g/<kind>/<identity>` (`grainIdOf`), whether the
 * owner is another member or this one: the owner's registry routes that id prefix to the
 * kind's router, and a remote batch sends each grain id once in its table of target ids. It is
 * serialized once and its deadline is the request's own (core carries a request's time left
 * across nodes). A top-level call carries no header and no per-call string (a concatenated
 * header is a rope every encode must flatten, a deadline as text a number-to-string
 * conversion: ~2 µs per call in the caller, measured). Headers only appear on the calls grains
 * make (the chain) and on sends.
 */
/** Call-chain id (calls made by grains). */
export const H_CHAIN = 'g.c';
/** JSON array of the non-reentrant grains waiting in the chain ('kind/identity'). */
export const H_PATH = 'g.p';
/** '1': a send; the router acknowledges acceptance instead of the grain replying. */
export const H_ACK = 'g.a';
/** A send's reply-to `<address>/<id>` (addresses hold no '/'): the grain's sender, if any. */
export const H_REPLY_TO = 'g.r';

/** Prefix of every grain id: the grains of kind K are `$g/K/<identity>`. */
const GRAIN_ID_PREFIX = '$g/';

/** Prefixes by kind, made once: a call to a new identity builds one string, not three. */
const prefixes = new Map<string, string>();
/** Kinds are few; a caller naming more (bad input) only stops caching. */
const MAX_CACHED_PREFIXES = 1024;

/** The prefix of the grain ids of `kind`, which the owner's registry routes to its router. */
export function grainPrefixOf(kind: string): string {
  let prefix = prefixes.get(kind);
  if (prefix === undefined) {
    prefix = `${GRAIN_ID_PREFIX}${kind}/`;
    if (prefixes.size < MAX_CACHED_PREFIXES) prefixes.set(kind, prefix);
  }
  return prefix;
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

/**
 * The reply-to PID of a send's header; undefined when absent or malformed. `sender` (the
 * call's sender) lends the reply-to its way back (PID._via).
 */
export function replyToOf(
  header: Readonly<Record<string, string>> | undefined,
  sender?: PID,
): PID | undefined {
  const v = header?.[H_REPLY_TO];
  const slash = v === undefined ? -1 : v.indexOf('/');
  if (slash <= 0) return undefined;
  const pid = new PID(v!.slice(0, slash), v!.slice(slash + 1));
  // Named by the peer, like the sender: it goes back the way the sender does (a peer cannot
  // make this node dial an address it wrote in a header).
  pid._via = sender?._via;
  return pid;
}

/**
 * `header` plus the W3C trace context of `trace` (a call not observed here: no SDK in this
 * caller, or a GranaryClient), or `header` itself when `trace` carries nothing.
 */
export function withTraceContext(
  header: Record<string, string> | undefined,
  trace: TraceContext,
): Record<string, string> | undefined {
  const out: Record<string, string> = { ...header };
  return injectTraceContext(trace, out) ? out : header;
}

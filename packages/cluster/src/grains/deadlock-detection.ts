import type { Context } from '@opentelemetry/api';
import { CallChainTooLongError, DeadlockError } from '../errors';
import { H_PATH } from './internal/call-headers';
import type { KindDefinition } from './kind';

/**
 * Deadlock detection across grains (Orleans' call-chain reentrancy check): a call made by a
 * grain carries its chain, the non-reentrant grains already waiting in it (`g.p`, with the
 * chain's id in `g.c`). A call to a non-reentrant grain that is in its own chain would wait
 * on itself forever, so the target's router fails it at once with DeadlockError.
 */

/** The call a grain's outgoing calls continue: its deadline and its chain. */
export interface ParentCall {
  /** Epoch ms; the outgoing call's deadline is never later. */
  deadline: number;
  chainId: string;
  /** Non-reentrant grains waiting in the chain, 'kind/identity'. */
  path: readonly string[];
  /** The calling turn's trace context (its server span), when it is traced. */
  trace?: Context | undefined;
}

const EMPTY: readonly string[] = Object.freeze([]);

/**
 * Longest chain path a call carries, in bytes of its JSON. With the most trace context a call
 * can carry (W3C baggage 8 KiB, tracestate 512 bytes) and its other entries it stays under the
 * remote's default `limits.maxHeaderBytes` (16 KiB). A longer header (24 nested calls of 900-byte
 * identities) made the receiving member close the link between the two members as a peer over
 * its limits, failing every call on it.
 */
export const MAX_CHAIN_PATH_BYTES = 6 * 1024;

/**
 * Throws CallChainTooLongError when `path` is over MAX_CHAIN_PATH_BYTES as JSON. Counted exactly
 * only when an upper bound (6 bytes per UTF-16 unit, a JSON escape's) says it could be.
 */
export function checkChainPath(path: readonly string[]): void {
  let upper = 2 + path.length * 3;
  for (const p of path) upper += p.length * 6;
  if (upper <= MAX_CHAIN_PATH_BYTES) return;
  if (Buffer.byteLength(JSON.stringify(path)) > MAX_CHAIN_PATH_BYTES) {
    throw new CallChainTooLongError(path.length, MAX_CHAIN_PATH_BYTES);
  }
}

/** The chain path of a call's header (empty when absent or malformed). */
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

/**
 * The DeadlockError of a call to the grain whose identity is `key` from index `from` on (its
 * id, or the identity itself) with header `header`, or undefined when the call may go on (no
 * chain, the grain not waiting in it, or the message reentrant for the kind).
 */
export function deadlockOf(
  def: KindDefinition,
  key: string,
  from: number,
  header: Readonly<Record<string, string>> | undefined,
  message: unknown,
): DeadlockError | undefined {
  if (header?.[H_PATH] === undefined) return undefined;
  const path = pathOf(header);
  const self = `${def.name}/${key.slice(from)}`;
  return path.includes(self) && !def.reentrant(message)
    ? new DeadlockError([...path, self])
    : undefined;
}

/**
 * The chain path the calls of one turn carry: the incoming path, plus the grain itself unless
 * the kind or the message is reentrant (a reentrant grain never blocks a chain).
 */
export function outgoingPath(
  def: KindDefinition,
  identity: string,
  message: unknown,
  header: Readonly<Record<string, string>> | undefined,
): readonly string[] {
  const incoming = pathOf(header);
  return def.alwaysReentrant || def.reentrant(message)
    ? incoming
    : [...incoming, `${def.name}/${identity}`];
}

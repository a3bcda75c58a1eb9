/**
 * Header keys of a grain call. A call travels as the user's own message to the target member's
 * grain router, with these string headers: no wrapping, so the message is serialized once.
 */
export const H_KIND = 'g.k';
/** Identity of the grain. */
export const H_ID = 'g.i';
/** Deadline, epoch ms. */
export const H_DEADLINE = 'g.d';
/** Call-chain id. */
export const H_CHAIN = 'g.c';
/** JSON array of the non-reentrant grains waiting in the chain ('kind/identity'). */
export const H_PATH = 'g.p';
/** '1': a send; the router acknowledges acceptance instead of the grain replying. */
export const H_ACK = 'g.a';

/** The call's metadata as the grain runtime reads it from headers. */
export interface CallMeta {
  kind: string;
  identity: string;
  deadline: number;
  chainId: string;
  path: readonly string[];
}

/** Builds the header of one attempt. */
export function callHeader(
  kind: string,
  identity: string,
  deadline: number,
  chainId: string,
  path: readonly string[] | undefined,
  ack: boolean,
): Record<string, string> {
  const h: Record<string, string> = {
    [H_KIND]: kind,
    [H_ID]: identity,
    [H_DEADLINE]: String(deadline),
    [H_CHAIN]: chainId,
  };
  if (path !== undefined && path.length > 0) h[H_PATH] = JSON.stringify(path);
  if (ack) h[H_ACK] = '1';
  return h;
}

/** The deadline of a header (Infinity when absent or malformed). */
export function deadlineOf(header: Readonly<Record<string, string>> | undefined): number {
  const d = header?.[H_DEADLINE];
  const n = d === undefined ? NaN : Number(d);
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

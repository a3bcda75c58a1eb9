/**
 * Idempotent-by-op-id increments: the workload of the durability and chaos tests. Each caller
 * numbers its operations on each grain 1, 2, 3, ... and retries an operation with the same
 * number until it is acknowledged; the grain applies an operation only if its number is above
 * the last one it applied for that caller, so a retry after an unknown outcome is never
 * applied twice, and the stored state says exactly which acknowledged operations it holds.
 */

/** A grain's state: how many operations it applied, and the last number applied per caller. */
export interface OpCounterState {
  n: number;
  last: Record<string, number>;
}

/** One operation: caller `c`'s operation number `s` on the grain. */
export interface OpMessage {
  c: string;
  s: number;
}

/**
 * The grain's answer: `prev`, the last number it had applied for this caller before this
 * operation (a caller that was acknowledged a higher number sees its own acknowledged
 * operation missing: lost state served), and `n` after it.
 */
export interface OpReply {
  prev: number;
  n: number;
}

/** The state of a grain that applied nothing. */
export function emptyOpCounter(): OpCounterState {
  return { n: 0, last: {} };
}

/**
 * Applies `op` to `state` in place unless it was applied before; returns the reply. The grain
 * stores the state (write-through) before it replies.
 */
export function applyOp(state: OpCounterState, op: OpMessage): OpReply {
  const prev = state.last[op.c] ?? 0;
  if (op.s > prev) {
    state.last[op.c] = op.s;
    state.n++;
  }
  return { prev, n: state.n };
}

/** True for a message shaped like an OpMessage (grains check what they are sent). */
export function isOpMessage(message: unknown): message is OpMessage {
  const m = message as Partial<OpMessage> | null;
  return (
    m !== null &&
    typeof m === 'object' &&
    typeof m.c === 'string' &&
    typeof m.s === 'number' &&
    Number.isSafeInteger(m.s) &&
    m.s > 0
  );
}

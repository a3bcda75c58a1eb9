import { DeadlockError, GrainError } from '../../errors';
import { ThreadHandlerError } from '../../threads/errors';
import { isRuntimeStateError } from '../grain-state';

/**
 * The GrainError a caller of `kind/identity` gets for `error`, thrown by the grain's code. An
 * error that stands for another one (a GrainError the grain rethrew from a call of its own, a
 * threaded handler's error) passes on the name and code of the error first thrown.
 */
export function grainErrorOf(kind: string, identity: string, error: unknown): GrainError {
  const e = error instanceof Error ? error : nonError(error);
  const nested = GrainError.is(e) || ThreadHandlerError.is(e);
  const code = nested ? e.originalCode : (e as { code?: unknown }).code;
  const name = nested ? e.originalName : e.name;
  return new GrainError(
    kind,
    identity,
    name,
    typeof code === 'string' ? code : undefined,
    e.message,
  );
}

/**
 * What the caller of `kind/identity` gets for an error that ended the grain's turn or
 * activation. The runtime's own errors that grain code let through go as they are: those of its
 * state (a conflict, the store unavailable) and a DeadlockError of a call the grain made, so
 * every caller up the chain sees the deadlock and its chain, not a GrainError of the grain
 * that happened to make the cyclic call. Anything else is the grain's: a GrainError.
 */
export function callerErrorOf(kind: string, identity: string, error: unknown): Error {
  if (isRuntimeStateError(error) || DeadlockError.is(error)) return error as Error;
  return grainErrorOf(kind, identity, error);
}

/** Longest description of a thrown non-Error that reaches the caller. */
const MAX_THROWN_DESCRIPTION = 1024;

/**
 * An Error standing for a thrown value that is not one (`throw { reason }`, `throw 'boom'`): its
 * message describes the value (a string as it is, else JSON, else String()), never
 * "[object Object]".
 */
function nonError(value: unknown): Error {
  let text: string | undefined;
  if (typeof value === 'string') text = value;
  else {
    try {
      text = JSON.stringify(value);
    } catch {
      text = undefined;
    }
    text ??= String(value);
  }
  const e = new Error(
    text.length > MAX_THROWN_DESCRIPTION ? `${text.slice(0, MAX_THROWN_DESCRIPTION)}...` : text,
  );
  e.name = 'NonErrorThrown';
  return e;
}

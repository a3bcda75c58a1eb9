/**
 * Input Granary refuses before doing anything: a construction option or a call argument.
 * Re-exported by `errors.ts`.
 */
import { GranaryError } from './granary-error';

/**
 * A construction option (of a system, a remote, a cluster, a pool, a kind...) is missing or out
 * of range; `option` names it, as the user wrote it. Thrown before anything starts.
 */
export class InvalidOptionError extends GranaryError {
  static override readonly code = 'ERR_INVALID_OPTION';
  override readonly name = 'InvalidOptionError';
  constructor(
    /** The option, e.g. `mailbox.capacity`. */
    readonly option: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`invalid option ${option}: ${detail}`, options);
  }
}

/**
 * An argument of a call (a method or function, not a constructor's options) cannot be accepted;
 * `argument` names it, e.g. `identity` or `options.timeoutMs`. Nothing was done.
 */
export class InvalidArgumentError extends GranaryError {
  static override readonly code = 'ERR_INVALID_ARGUMENT';
  override readonly name = 'InvalidArgumentError';
  constructor(
    /** The argument, e.g. `identity` or `options.timeoutMs`. */
    readonly argument: string,
    detail: string,
  ) {
    super(`invalid argument ${argument}: ${detail}`);
  }
}

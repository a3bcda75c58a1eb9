import { AdminError } from '../errors';

/** The CLI's exit codes (scripts branch on them; docs/admin-api.md lists them). */
export const EXIT = {
  /** Done; every member answered. */
  ok: 0,
  /** The grain call or action failed (its error is printed). */
  failed: 1,
  /** Wrong usage: unknown command, missing argument, bad flag. */
  usage: 2,
  /** The admin API could not be reached (connection refused, timeout, DNS). */
  unreachable: 3,
  /** The token was missing or refused (401). */
  unauthorized: 4,
  /** No such kind, member or grain owner (404). */
  notFound: 5,
  /** An answer came, but some members did not answer in time (listed on stderr). */
  incomplete: 6,
} as const;

/** An error that ends the CLI with exit code `exitCode` and prints `message`. */
export class CliExit extends AdminError {
  static override readonly code = 'ERR_ADMIN_CLI';
  override readonly name = 'CliExit';

  constructor(
    readonly exitCode: number,
    message: string,
    /** The admin API's `code` for the error, when it gave one (e.g. `ERR_ADMIN_CLOSED`). */
    readonly apiCode?: string,
  ) {
    super(message);
  }
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import { AdminConfigError } from './errors';

/** Where the admin API mounts its routes: the member's ops server (`cluster.ops`). */
export interface AdminMount {
  route(
    method: string,
    path: string,
    handler: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>,
  ): void;
  /** `http://host:port` the server listens on. */
  readonly url: string;
}

/** Options of {@link Admin.enable}. */
export interface AdminOptions {
  /**
   * Bearer token every `/v1/` request must present (at least 16 characters). Without it a token
   * is generated and printed once on stderr, which is only allowed on a loopback address.
   * @default generated (loopback only)
   */
  token?: string | undefined;
  /**
   * The server to mount on.
   * @default cluster.ops (start the cluster with an `ops` option)
   */
  mount?: AdminMount | undefined;
  /**
   * How long a cluster-wide question waits for the other members (ms); members that did not
   * answer by then are listed in `notAnswering`.
   * @default 2000
   */
  fanoutTimeoutMs?: number | undefined;
  /**
   * Sampling interval of the live view (server-sent events, the dashboard, `granary watch`).
   * @default 1000
   */
  sampleIntervalMs?: number | undefined;
  /**
   * What a drain does once this member has left the cluster (the graceful leave finished).
   * @default nothing (the process keeps running, without a cluster)
   */
  onDrained?: (() => void) | undefined;
  /**
   * Where the generated token is printed.
   * @default process.stderr
   */
  print?: ((line: string) => void) | undefined;
}

/** Defaults of AdminOptions. */
export const DEFAULT_ADMIN_OPTIONS = {
  fanoutTimeoutMs: 2000,
  sampleIntervalMs: 1000,
} as const;

/** Every option Admin.enable knows (the compiler keeps it in step). */
const ADMIN_OPTION_KEYS = {
  token: true,
  mount: true,
  fanoutTimeoutMs: true,
  sampleIntervalMs: true,
  onDrained: true,
  print: true,
} as const satisfies Record<keyof AdminOptions, true>;

/**
 * Throws AdminConfigError naming an option Admin.enable does not know. From JavaScript,
 * `{ tokn: process.env.TOKEN }` was ignored: a token was generated and the one the operator
 * meant refused at every request.
 */
export function checkAdminOptions(options: AdminOptions): void {
  for (const name of Object.keys(options)) {
    if (Object.prototype.hasOwnProperty.call(ADMIN_OPTION_KEYS, name)) continue;
    const meant = Object.keys(ADMIN_OPTION_KEYS).find((k) =>
      k.toLowerCase().startsWith(name.toLowerCase().slice(0, 3)),
    );
    throw new AdminConfigError(
      `Admin.enable has no option '${name}'` +
        (meant === undefined ? '' : ` (did you mean '${meant}'?)`),
    );
  }
}

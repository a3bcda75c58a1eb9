import { InvalidOptionError } from '../invalid-input-errors';

/** listen() error codes that mean the host cannot be bound (not the port). */
const HOST_ERRORS = new Set(['EADDRNOTAVAIL', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * A server that could not listen, as an InvalidOptionError naming the option that chose the
 * address (`prefix` + `port` or `host`): Node's bare `listen EADDRINUSE 127.0.0.1:4020` did not
 * say whether the remote's port or the ops server's was taken.
 */
export function listenError(
  prefix: string,
  host: string,
  port: number,
  err: unknown,
): InvalidOptionError {
  const code = (err as { code?: unknown } | undefined)?.code;
  const field = typeof code === 'string' && HOST_ERRORS.has(code) ? 'host' : 'port';
  const why = err instanceof Error ? err.message : String(err);
  return new InvalidOptionError(`${prefix}${field}`, `cannot listen on ${host}:${port}: ${why}`, {
    cause: err,
  });
}

/** The logging calls the cluster makes; a pino logger (or core's Logger) fits. */
export interface ClusterLogger {
  debug(obj: unknown, msg?: string): void;
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
}

/** Drops everything: the default when no logger is given. */
export const NOOP_LOGGER: ClusterLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

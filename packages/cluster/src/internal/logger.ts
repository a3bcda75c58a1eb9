import type { Logger } from '@granary/core';
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

/** A cluster logger as a core Logger (the actor system's own lines go to the same place). */
export function asCoreLogger(l: ClusterLogger): Logger {
  const logger: Logger = {
    debug: (o, m) => l.debug(o, m),
    info: (o, m) => l.info(o, m),
    warn: (o, m) => l.warn(o, m),
    error: (o, m) => l.error(o, m),
    child: () => logger,
  };
  return logger;
}

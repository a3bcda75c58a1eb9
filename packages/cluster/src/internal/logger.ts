import { silentLogger, type Logger } from '@granary/core';

/**
 * The logger of the cluster and its parts: core's Logger (a pino logger fits as it is: level
 * methods, `child(bindings)`, errors under `err`).
 */
export type ClusterLogger = Logger;

/** Drops everything: a component's logger until its member hands it one. */
export const NOOP_LOGGER: ClusterLogger = silentLogger;

/**
 * A logger that writes to whatever `target()` returns at the time of each line (children
 * too): a shared component built before any member (a state store) logs to the member that
 * later hands it its logger, and drops lines until then.
 */
export function lateLogger(target: () => ClusterLogger): ClusterLogger {
  return {
    debug: (o, m) => target().debug(o, m),
    info: (o, m) => target().info(o, m),
    warn: (o, m) => target().warn(o, m),
    error: (o, m) => target().error(o, m),
    child: (bindings) => lateLogger(() => target().child(bindings)),
  };
}

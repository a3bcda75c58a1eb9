/** Stop began: Stopping delivered, children stopping; user lanes paused. */
export const F_STOPPING = 1;
/** Restart began: children stopping; user lanes paused. */
export const F_RESTARTING = 2;
/** Failed, waiting for the supervisor's directive; user lanes paused. */
export const F_SUSPENDED = 4;
/** Children gone, Stopped delivered or being delivered. */
export const F_FINISHING = 8;
/** Stopped by a supervisor after a failure: watchers see `why: 'failed'`. */
export const F_FAILED = 16;
/**
 * Not listed in the registry (spawnUnlisted): reached only through the PID it was given, stopped
 * by its owner, not a top-level actor that ActorSystem.shutdown waits for.
 */
export const F_UNLISTED = 32;
export const PAUSED = F_STOPPING | F_RESTARTING | F_SUSPENDED;
